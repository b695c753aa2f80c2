"""rbac.authorization.k8s.io/v1: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings,
stored with upstream's defaulting and validation (pkg/apis/rbac/validation). Requests are
not authorized against them (every request is allowed): charts that ship RBAC install as
on a real cluster.
"""

from __future__ import annotations

from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.registry import REGISTRY, ResourceType, Strategy

GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ["ServiceAccount", "User", "Group"]


def validate_rule(rule: dict, namespaced: bool, path: str) -> list[fe.FieldError]:
    """ValidatePolicyRule."""
    errs: list[fe.FieldError] = []
    if not rule.get("verbs"):
        errs.append(fe.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.append(
                fe.invalid(f"{path}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs")
            )
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(
                fe.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not rule.get("apiGroups"):
        errs.append(fe.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.get("resources"):
        errs.append(fe.required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errs


def _rules(obj: dict, namespaced: bool) -> list[fe.FieldError]:
    errs: list[fe.FieldError] = []
    for i, rule in enumerate(obj.get("rules") or ()):
        errs += validate_rule(rule or {}, namespaced, f"rules[{i}]")
    return errs


def validate_subject(s: dict, namespaced: bool, path: str) -> list[fe.FieldError]:
    """ValidateRoleBindingSubject."""
    errs: list[fe.FieldError] = []
    name = s.get("name") or ""
    if not name:
        errs.append(fe.required(f"{path}.name", ""))
    kind = s.get("kind") or ""
    group = s.get("apiGroup") or ""
    if kind == "ServiceAccount":
        if name:
            errs += [fe.invalid(f"{path}.name", name, m) for m in names.name_is_dns_subdomain(name)]
        if group:
            errs.append(fe.not_supported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not s.get("namespace"):
            errs.append(fe.required(f"{path}.namespace", ""))
    elif kind in ("User", "Group"):
        if group != GROUP:
            errs.append(fe.not_supported(f"{path}.apiGroup", group, [GROUP]))
    else:
        errs.append(fe.not_supported(f"{path}.kind", kind, SUBJECT_KINDS))
    return errs


def _default_binding(obj: dict) -> None:
    """SetDefaults_RoleBinding and SetDefaults_Subject."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for s in obj.get("subjects") or ():
        if isinstance(s, dict) and not s.get("apiGroup") and s.get("kind") in ("User", "Group"):
            s["apiGroup"] = GROUP


class RoleStrategy(Strategy):
    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced

    def validate(self, obj: dict) -> list[fe.FieldError]:
        errs = _rules(obj, self.namespaced)
        agg = obj.get("aggregationRule")
        if not self.namespaced and agg is not None and not (agg or {}).get("clusterRoleSelectors"):
            errs.append(
                fe.required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                )
            )
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self.validate(new)


class BindingStrategy(Strategy):
    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced
        self.kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]

    def default(self, obj: dict, now: str | None = None) -> None:
        _default_binding(obj)

    def validate(self, obj: dict) -> list[fe.FieldError]:
        errs: list[fe.FieldError] = []
        ref = obj.get("roleRef") or {}
        if ref.get("apiGroup") != GROUP:
            errs.append(fe.not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), [GROUP]))
        if ref.get("kind") not in self.kinds:
            errs.append(fe.not_supported("roleRef.kind", ref.get("kind", ""), self.kinds))
        if not ref.get("name"):
            errs.append(fe.required("roleRef.name", ""))
        else:
            errs += [fe.invalid("roleRef.name", ref["name"], m) for m in names.name_is_path_segment(ref["name"])]
        for i, s in enumerate(obj.get("subjects") or ()):
            errs += validate_subject(s or {}, self.namespaced, f"subjects[{i}]")
        return errs

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        errs = self.validate(new)
        if (new.get("roleRef") or {}) != (old.get("roleRef") or {}):
            errs.append(fe.invalid("roleRef", new.get("roleRef"), "cannot change roleRef"))
        return errs


roles = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "Role",
        "roles",
        namespaced=True,
        strategy=RoleStrategy(True),
        name_validator=names.name_is_path_segment,
    )
)
clusterroles = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ClusterRole",
        "clusterroles",
        namespaced=False,
        strategy=RoleStrategy(False),
        name_validator=names.name_is_path_segment,
    )
)
rolebindings = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "RoleBinding",
        "rolebindings",
        namespaced=True,
        strategy=BindingStrategy(True),
        name_validator=names.name_is_path_segment,
    )
)
clusterrolebindings = REGISTRY.add(
    ResourceType(
        GROUP,
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        namespaced=False,
        strategy=BindingStrategy(False),
        name_validator=names.name_is_path_segment,
    )
)
