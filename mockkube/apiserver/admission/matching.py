"""Which writes a policy or binding applies to (pure): upstream's
``admission/plugin/policy/matching`` over rules, selectors and exclusions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockkube.machinery import selectors

# upstream IsExemptAdmissionConfigurationResource: admission never applies to its own configuration
EXEMPT = {
    ("admissionregistration.k8s.io", r)
    for r in (
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicybindings",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    )
}


@dataclass
class Attributes:
    """One write as admission sees it (upstream admission.Attributes)."""

    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    group: str
    version: str
    kind: str
    resource: str
    subresource: str
    namespace: str
    name: str
    obj: dict | None
    old: dict | None
    namespaced: bool
    user: dict = field(default_factory=dict)
    dry_run: bool = False
    options: dict | None = None
    namespace_object: dict | None = None
    # (user, attributes dict) -> (allowed, reason): the server's authorizer for CEL's
    # ``authorizer`` library; None allows every check (AlwaysAllow)
    authorize: Any = None

    def request(self) -> dict:
        """The CEL `request` variable (an AdmissionRequest)."""
        kind = {"group": self.group, "version": self.version, "kind": self.kind}
        resource = {"group": self.group, "version": self.version, "resource": self.resource}
        return {
            "kind": kind,
            "resource": resource,
            "subResource": self.subresource,
            "requestKind": kind,
            "requestResource": resource,
            "requestSubResource": self.subresource,
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": {"username": "", "uid": "", "groups": [], "extra": {}, **self.user},
            "dryRun": self.dry_run,
            "options": self.options,
        }


def _in(values: Any, want: str) -> bool:
    return bool(values) and ("*" in values or want in values)


def _resource_matches(patterns: list[str], resource: str, sub: str) -> bool:
    for p in patterns or []:
        if p == "*/*":
            return True
        if p == "*" and not sub:
            return True
        r, _, s = p.partition("/")
        if s:
            if (r == "*" or r == resource) and (s == "*" or s == sub) and sub:
                return True
        elif r == resource and not sub:
            return True
    return False


def rule_matches(rule: dict, a: Attributes) -> bool:
    """One NamedRuleWithOperations against the request."""
    if not _in(rule.get("operations"), a.operation):
        return False
    if not _in(rule.get("apiGroups"), a.group) or not _in(rule.get("apiVersions"), a.version):
        return False
    if not _resource_matches(rule.get("resources") or [], a.resource, a.subresource):
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster" and a.namespaced or scope == "Namespaced" and not a.namespaced:
        return False
    names = rule.get("resourceNames")
    return not names or a.name in names


def _labels(obj: dict | None) -> dict:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _selector_matches(sel: dict | None, labels: dict) -> bool:
    if not sel:
        return True
    return selectors.label_selector_from_object(sel).matches(labels)


def namespace_selector_matches(sel: dict | None, a: Attributes) -> bool:
    """Namespaced requests test their namespace's labels, a Namespace its own; other
    cluster-scoped resources always match (upstream MatchNamespaceSelector)."""
    if not sel:
        return True
    if a.group == "" and a.resource == "namespaces":
        return _selector_matches(sel, _labels(a.obj or a.old))
    if not a.namespaced or not a.namespace:
        return True
    return _selector_matches(sel, _labels(a.namespace_object))


def object_selector_matches(sel: dict | None, a: Attributes) -> bool:
    """The new or the old object matches (upstream MatchObjectSelector)."""
    if not sel:
        return True
    return any(o is not None and _selector_matches(sel, _labels(o)) for o in (a.obj, a.old))


def resources_match(mr: dict | None, a: Attributes, rules_required: bool) -> bool:
    """A MatchResources block: selectors, resourceRules (all when absent and not required),
    excludeResourceRules."""
    mr = mr or {}
    if not namespace_selector_matches(mr.get("namespaceSelector"), a):
        return False
    if not object_selector_matches(mr.get("objectSelector"), a):
        return False
    if any(rule_matches(r, a) for r in mr.get("excludeResourceRules") or []):
        return False
    rules = mr.get("resourceRules")
    if not rules:
        return not rules_required
    return any(rule_matches(r, a) for r in rules)
