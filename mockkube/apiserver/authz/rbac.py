"""RBAC rule evaluation as upstream's ``plugin/pkg/auth/authorizer/rbac`` does it.

Pure over four lists of objects (Roles, ClusterRoles, RoleBindings, ClusterRoleBindings);
``mockkube.apiserver.http.authz`` feeds it the store's current objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery.selectors import label_selector_from_object

GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"


def sa_username(namespace: str, name: str) -> str:
    return f"{SA_PREFIX}{namespace}:{name}"


def verb_matches(rule: dict, verb: str) -> bool:
    return any(v in ("*", verb) for v in rule.get("verbs") or ())


def group_matches(rule: dict, group: str) -> bool:
    return any(g in ("*", group) for g in rule.get("apiGroups") or ())


def resource_matches(rule: dict, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule.get("resources") or ():
        if r in ("*", combined):
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def name_matches(rule: dict, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def url_matches(rule: dict, path: str) -> bool:
    for u in rule.get("nonResourceURLs") or ():
        if u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: dict) -> bool:
    if not verb_matches(rule, attrs.verb):
        return False
    if attrs.resource_request:
        return (
            group_matches(rule, attrs.api_group)
            and resource_matches(rule, attrs.resource, attrs.subresource)
            and name_matches(rule, attrs.name)
        )
    return url_matches(rule, attrs.path)


def applies_to(user: dict, subject: dict, binding_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return name == user.get("username")
    if kind == "Group":
        return name in (user.get("groups") or ())
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_namespace
        return bool(ns) and sa_username(ns, name) == user.get("username")
    return False


@dataclass
class Policy:
    """A snapshot of the cluster's RBAC objects, indexed for lookups."""

    roles: dict[tuple[str, str], dict] = field(default_factory=dict)
    cluster_roles: dict[str, dict] = field(default_factory=dict)
    role_bindings: dict[str, list[dict]] = field(default_factory=dict)  # by namespace
    cluster_role_bindings: list[dict] = field(default_factory=list)
    # bindings by subject key, in their order above: a request looks only at its own
    _crb_by: dict[tuple, list[int]] = field(default_factory=dict)
    _rb_by: dict[str, dict[tuple, list[int]]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        roles: Iterable[dict],
        cluster_roles: Iterable[dict],
        role_bindings: Iterable[dict],
        cluster_role_bindings: Iterable[dict],
    ) -> "Policy":
        p = cls()
        for r in roles:
            p.roles[(r["metadata"].get("namespace", ""), r["metadata"]["name"])] = r
        for r in cluster_roles:
            p.cluster_roles[r["metadata"]["name"]] = r
        for b in role_bindings:
            p.role_bindings.setdefault(b["metadata"].get("namespace", ""), []).append(b)
        p.cluster_role_bindings = list(cluster_role_bindings)
        for i, b in enumerate(p.cluster_role_bindings):
            for key in _subject_keys(b, ""):
                p._crb_by.setdefault(key, []).append(i)
        for ns, bs in p.role_bindings.items():
            idx = p._rb_by.setdefault(ns, {})
            for i, b in enumerate(bs):
                for key in _subject_keys(b, ns):
                    idx.setdefault(key, []).append(i)
        return p

    @staticmethod
    def _candidates(index: dict[tuple, list[int]], user: dict) -> list[int]:
        keys = [("User", user.get("username", ""))] + [("Group", g) for g in user.get("groups") or ()]
        found: set[int] = set()
        for k in keys:
            found.update(index.get(k, ()))
        return sorted(found)

    def _role_rules(self, ref: dict, namespace: str) -> tuple[list[dict], str]:
        name = ref.get("name", "")
        if ref.get("kind") == "ClusterRole":
            role = self.cluster_roles.get(name)
            return (role.get("rules") or [], "") if role else ([], f'clusterrole.{GROUP} "{name}" not found')
        role = self.roles.get((namespace, name))
        return (role.get("rules") or [], "") if role else ([], f'role.{GROUP} "{name}" not found')

    def visit(self, user: dict, namespace: str) -> Iterator[tuple[str, dict | None, str]]:
        """(binding description, rule, error) for every rule that applies to ``user`` in ``namespace``
        (cluster-wide bindings first, as upstream visits them); rule None carries an error."""
        for i in self._candidates(self._crb_by, user):
            b = self.cluster_role_bindings[i]
            if any(applies_to(user, s, "") for s in b.get("subjects") or ()):
                rules, err = self._role_rules(b.get("roleRef") or {}, "")
                desc = f'ClusterRoleBinding "{b["metadata"]["name"]}"'
                if err:
                    yield desc, None, err
                for r in rules:
                    yield desc, r, ""
        if not namespace:
            return
        bindings = self.role_bindings.get(namespace, [])
        for i in self._candidates(self._rb_by.get(namespace, {}), user):
            b = bindings[i]
            if any(applies_to(user, s, namespace) for s in b.get("subjects") or ()):
                rules, err = self._role_rules(b.get("roleRef") or {}, namespace)
                desc = f'RoleBinding "{b["metadata"]["name"]}" of namespace "{namespace}"'
                if err:
                    yield desc, None, err
                for r in rules:
                    yield desc, r, ""

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) as upstream's RBACAuthorizer (no opinion when nothing allows)."""
        errs: list[str] = []
        for _desc, rule, err in self.visit(attrs.user, attrs.namespace):
            if err:
                errs.append(err)
            elif rule_allows(attrs, rule):
                return True, ""
        if not errs:
            return False, ""
        return False, "RBAC: " + (errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")

    def rules_for(self, user: dict, namespace: str) -> tuple[list[dict], list[dict], list[str]]:
        """(resource rules, non-resource rules, errors) for SelfSubjectRulesReview."""
        res: list[dict] = []
        nonres: list[dict] = []
        errs: list[str] = []
        for _desc, rule, err in self.visit(user, namespace):
            if err:
                errs.append(err)
            elif rule.get("nonResourceURLs"):
                nonres.append(
                    {"verbs": list(rule.get("verbs") or []), "nonResourceURLs": list(rule["nonResourceURLs"])}
                )
            else:
                out = {
                    "verbs": list(rule.get("verbs") or []),
                    "apiGroups": list(rule.get("apiGroups") or []),
                    "resources": list(rule.get("resources") or []),
                }
                if rule.get("resourceNames"):
                    out["resourceNames"] = list(rule["resourceNames"])
                res.append(out)
        return res, nonres, errs


def _subject_keys(binding: dict, namespace: str) -> set[tuple]:
    """The (kind, user or group name) a binding's subjects can match; ServiceAccounts as
    their usernames."""
    keys: set[tuple] = set()
    for sub in binding.get("subjects") or ():
        kind, name = sub.get("kind"), sub.get("name", "")
        if kind == "ServiceAccount":
            ns = sub.get("namespace") or namespace
            if ns:
                keys.add(("User", sa_username(ns, name)))
        elif kind in ("User", "Group"):
            keys.add((kind, name))
    return keys


def covers(owner_rules: list[dict], wanted: dict) -> bool:
    """Whether ``owner_rules`` grant everything ``wanted`` grants (escalation check:
    upstream's validation.Covers, expanded rule by rule)."""
    for sub in _expand(wanted):
        if not any(_rule_covers(o, sub) for o in owner_rules):
            return False
    return True


def _expand(rule: dict) -> Iterator[dict]:
    if rule.get("nonResourceURLs"):
        for v in rule.get("verbs") or ():
            for u in rule["nonResourceURLs"]:
                yield {"verbs": [v], "nonResourceURLs": [u]}
        return
    names = rule.get("resourceNames") or [None]
    for g in rule.get("apiGroups") or ():
        for r in rule.get("resources") or ():
            for v in rule.get("verbs") or ():
                for n in names:
                    out = {"verbs": [v], "apiGroups": [g], "resources": [r]}
                    if n is not None:
                        out["resourceNames"] = [n]
                    yield out


def _has(values: Iterable[str], value: str) -> bool:
    values = list(values or ())
    return "*" in values or value in values


def _rule_covers(owner: dict, sub: dict) -> bool:
    verb = sub["verbs"][0]
    if not _has(owner.get("verbs"), verb):
        return False
    if sub.get("nonResourceURLs"):
        url = sub["nonResourceURLs"][0]
        for u in owner.get("nonResourceURLs") or ():
            if u == "*" or u == url or (u.endswith("*") and url.startswith(u[:-1])):
                return True
        return False
    if owner.get("nonResourceURLs") and not owner.get("resources"):
        return False
    if not _has(owner.get("apiGroups"), sub["apiGroups"][0]):
        return False
    res = sub["resources"][0]
    owner_res = owner.get("resources") or ()
    if not ("*" in owner_res or res in owner_res):
        _base, _, subres = res.partition("/")
        if not (subres and f"*/{subres}" in owner_res):
            return False
    owner_names = owner.get("resourceNames") or ()
    if not owner_names:
        return True
    want = sub.get("resourceNames") or ()
    return bool(want) and want[0] in owner_names


def aggregated_rules(role: dict, roles: list[dict]) -> list[dict]:
    """The rules ``role``'s aggregationRule selects from ``roles``."""
    selectors = [
        label_selector_from_object(s) for s in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ()
    ]
    out: list[dict] = []
    for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
        if other["metadata"]["name"] == role["metadata"]["name"]:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(s.matches(labels) for s in selectors):
            for rule in other.get("rules") or ():
                if rule not in out:
                    out.append(rule)
    return out
