"""The Kubernetes CEL authorizer library (``k8s.io/apiserver/pkg/cel/library/authz.go``):
``authorizer.group(g).resource(r).namespace(ns).name(n).subresource(s).check(verb)``,
``authorizer.path(p).check(verb)``, ``authorizer.serviceAccount(ns, name)``,
``authorizer.requestResource`` and the Decision's ``allowed()``, ``reason()``,
``errored()``, ``error()``.

Checks are answered by an ``allow(user, attributes) -> (allowed, reason)`` function the
caller supplies: admission passes the server's authorizer for the request's user
(mockkube/apiserver/admission/policy.py), which allows everything while authorization is off.
"""

from __future__ import annotations

from typing import Any, Callable

from mockkube.cel import engine

Allow = Callable[[dict, dict], "tuple[bool, str]"]


def allow_all(user: dict, attrs: dict) -> tuple[bool, str]:
    return True, ""


class Authorizer:
    def __init__(self, user: dict, allow: Allow = allow_all, request_resource: dict | None = None) -> None:
        self.user, self.allow = user, allow
        self.request_resource = request_resource or {}

    def cel_select(self, name: str) -> Any:
        if name == "requestResource":
            return ResourceCheck(self, dict(self.request_resource))
        raise KeyError(name)


class GroupCheck:
    def __init__(self, authz: Authorizer, group: str) -> None:
        self.authz, self.group = authz, group


class ResourceCheck:
    def __init__(self, authz: Authorizer, attrs: dict) -> None:
        self.authz, self.attrs = authz, attrs

    def with_(self, key: str, value: str) -> "ResourceCheck":
        return ResourceCheck(self.authz, {**self.attrs, key: value})


class PathCheck:
    def __init__(self, authz: Authorizer, path: str) -> None:
        self.authz, self.path = authz, path


class Decision:
    def __init__(self, allowed: bool, reason: str) -> None:
        self.allowed, self.reason = allowed, reason


def _check(c: Any, verb: str) -> Decision:
    attrs = dict(c.attrs) if isinstance(c, ResourceCheck) else {"path": c.path}
    attrs["verb"] = verb
    return Decision(*c.authz.allow(c.authz.user, attrs))


_SA = "system:serviceaccount:"
_FUNCTIONS = {
    "group": [("Authorizer", ("string",), "GroupCheck", lambda a, g: GroupCheck(a, g))],
    "path": [("Authorizer", ("string",), "PathCheck", lambda a, p: PathCheck(a, p))],
    "serviceAccount": [
        (
            "Authorizer",
            ("string", "string"),
            "Authorizer",
            lambda a, ns, n: Authorizer(
                {"username": f"{_SA}{ns}:{n}", "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}"]},
                a.allow,
            ),
        )
    ],
    "resource": [
        (
            "GroupCheck",
            ("string",),
            "ResourceCheck",
            lambda g, r: ResourceCheck(g.authz, {"group": g.group, "resource": r}),
        )
    ],
    "subresource": [("ResourceCheck", ("string",), "ResourceCheck", lambda c, s: c.with_("subresource", s))],
    "namespace": [("ResourceCheck", ("string",), "ResourceCheck", lambda c, s: c.with_("namespace", s))],
    "name": [("ResourceCheck", ("string",), "ResourceCheck", lambda c, s: c.with_("name", s))],
    # Kubernetes 1.31+ (AuthorizeWithSelectors): the selectors reach the authorizer's attributes
    "fieldSelector": [("ResourceCheck", ("string",), "ResourceCheck", lambda c, s: c.with_("fieldSelector", s))],
    "labelSelector": [("ResourceCheck", ("string",), "ResourceCheck", lambda c, s: c.with_("labelSelector", s))],
    "check": [("ResourceCheck", ("string",), "Decision", _check), ("PathCheck", ("string",), "Decision", _check)],
    "allowed": [("Decision", (), "bool", lambda d: d.allowed)],
    "reason": [("Decision", (), "string", lambda d: d.reason)],
    "errored": [("Decision", (), "bool", lambda d: False)],
    "error": [("Decision", (), "string", lambda d: "")],
}


def register() -> None:
    """Add the library to the engine's function table (idempotent)."""
    for name, overloads in _FUNCTIONS.items():
        have = engine._FUNCTIONS.setdefault(name, [])
        for o in overloads:
            if o not in have:
                have.append(o)


register()
