"""kube-apiserver's authorizer chain for ``--authorization-mode``: the privileged group
``system:masters`` first, then each mode in order until one allows (upstream's union)."""

from __future__ import annotations

from typing import Callable

from mockkube.apiserver.authz import node
from mockkube.apiserver.authz.rbac import Policy
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery import errors

MODES = ("AlwaysAllow", "AlwaysDeny", "RBAC", "Node")
MASTERS = "system:masters"


def parse_modes(text: str) -> list[str]:
    """``--authorization-mode`` (comma-separated), checked as kube-apiserver checks it."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            raise ValueError(f"authorization-mode {m!r} is not a valid mode (one of {', '.join(MODES)})")
    if len(set(modes)) != len(modes):
        raise ValueError(f"authorization-mode {text!r} has mode specified more than once")
    return modes or ["AlwaysAllow"]


class Authorizer:
    """Decides requests for one server; ``policy`` returns the current RBAC snapshot."""

    def __init__(self, modes: list[str], policy: Callable[[], Policy]) -> None:
        self.modes = modes
        self.policy = policy

    @property
    def enforcing(self) -> bool:
        return self.modes != ["AlwaysAllow"]

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        if MASTERS in attrs.groups or not self.enforcing:
            return True, ""
        reasons: list[str] = []
        for mode in self.modes:
            if mode == "AlwaysAllow":
                return True, ""
            if mode == "AlwaysDeny":
                return False, "Everything is forbidden."
            ok, why = node.authorize(attrs) if mode == "Node" else self.policy().authorize(attrs)
            if ok:
                return True, ""
            if why:
                reasons.append(why)
        return False, ", ".join(reasons)

    def rules_for(self, user: dict, namespace: str) -> tuple[list[dict], list[dict], list[str]]:
        if MASTERS in (user.get("groups") or ()) or not self.enforcing or "AlwaysAllow" in self.modes:
            return (
                [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                [],
            )
        res, nonres, errs = ([], [], []) if "RBAC" not in self.modes else self.policy().rules_for(user, namespace)
        if "Node" in self.modes and node.node_name(user):
            res = [*node.NODE_RULES, *res]
        return res, nonres, errs

    def check(self, attrs: Attributes) -> None:
        """Raise upstream's 403 unless ``attrs`` is allowed."""
        ok, why = self.authorize(attrs)
        if not ok:
            raise forbidden(attrs, why)


def forbidden_message(attrs: Attributes) -> str:
    """upstream responsewriters.forbiddenMessage."""
    user = attrs.username
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (
            f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
            f'in the namespace "{attrs.namespace}"'
        )
    return (
        f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" at the cluster scope'
    )


def forbidden(attrs: Attributes, reason: str = "") -> errors.APIError:
    msg = forbidden_message(attrs)
    if reason:
        msg = f"{msg}: {reason}"
    if not attrs.resource_request:
        return errors.APIError(403, "Forbidden", f"forbidden: {msg}", {})
    return errors.forbidden(attrs.resource, attrs.api_group, attrs.name, msg)
