"""RBAC's escalation and bind checks on writes of Roles, ClusterRoles and their bindings, as
upstream's ``pkg/registry/rbac/*/policybased`` storage makes them: a user may only grant
rights it holds, unless it has the ``escalate`` (roles) or ``bind`` (bindings) verb."""

from __future__ import annotations

from typing import Callable

from mockkube.apiserver.admission.matching import Attributes as Admission
from mockkube.apiserver.authz.authorizer import MASTERS, Authorizer
from mockkube.apiserver.authz.rbac import GROUP, _expand, _rule_covers
from mockkube.apiserver.authz.requestinfo import Attributes
from mockkube.machinery import errors

_FULL = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]


def _q(values: list[str]) -> str:
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def compact_string(rule: dict) -> str:
    """upstream rbacv1helpers.CompactString."""
    parts = []
    for key, label in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("resourceNames", "ResourceNames"),
        ("verbs", "Verbs"),
    ):
        if rule.get(key):
            parts.append(f"{label}:{_q(rule[key])}")
    return "{" + ", ".join(parts) + "}"


def missing_rules(owner: list[dict], wanted: list[dict]) -> list[dict]:
    """The atoms of ``wanted`` that ``owner`` does not cover, merged by verb (CompactRules)."""
    merged: dict[tuple, dict] = {}
    for rule in wanted:
        for atom in _expand(rule):
            if any(_rule_covers(o, atom) for o in owner):
                continue
            key = (
                tuple(atom.get("apiGroups") or ()),
                tuple(atom.get("resources") or ()),
                tuple(atom.get("resourceNames") or ()),
                tuple(atom.get("nonResourceURLs") or ()),
            )
            if key in merged:
                if atom["verbs"][0] not in merged[key]["verbs"]:
                    merged[key]["verbs"].append(atom["verbs"][0])
            else:
                merged[key] = {**atom, "verbs": list(atom["verbs"])}
    return list(merged.values())


class EscalationCheck:
    """A validating admission step; ``authorizer()`` is the server's (None before start)."""

    def __init__(self, authorizer: Callable[[], Authorizer | None], role_rules: Callable[[dict, str], list[dict]]):
        self.authorizer = authorizer
        self.role_rules = role_rules  # (roleRef, namespace) -> rules; raises APIError 404

    def validate(self, a: Admission, warnings: list[str]) -> None:
        az = self.authorizer()
        if (
            az is None
            or not az.enforcing
            or a.group != GROUP
            or a.operation not in ("CREATE", "UPDATE")
            or a.subresource
            or a.obj is None
            or MASTERS in (a.user.get("groups") or ())
        ):
            return
        if a.resource in ("roles", "clusterroles"):
            self._role(az, a)
        elif a.resource in ("rolebindings", "clusterrolebindings"):
            self._binding(az, a)

    def _allowed(self, az: Authorizer, a: Admission, verb: str, resource: str, name: str) -> bool:
        return az.authorize(
            Attributes(user=a.user, verb=verb, api_group=GROUP, resource=resource, namespace=a.namespace, name=name)
        )[0]

    def _role(self, az: Authorizer, a: Admission) -> None:
        if (
            a.old is not None
            and a.old.get("rules") == a.obj.get("rules")
            and a.old.get("aggregationRule") == a.obj.get("aggregationRule")
        ):
            return
        if self._allowed(az, a, "escalate", a.resource, a.name):
            return
        wanted = _FULL if a.obj.get("aggregationRule") else list(a.obj.get("rules") or [])
        self._confirm(az, a, wanted)

    def _binding(self, az: Authorizer, a: Admission) -> None:
        ref = a.obj.get("roleRef") or {}
        if a.old is not None and a.old.get("roleRef") == ref:
            return
        plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        if self._allowed(az, a, "bind", plural, ref.get("name", "")):
            return
        try:
            wanted = self.role_rules(ref, a.namespace)
        except errors.APIError as e:
            raise errors.forbidden(a.resource, a.group, a.name, e.message) from None
        self._confirm(az, a, wanted)

    def _confirm(self, az: Authorizer, a: Admission, wanted: list[dict]) -> None:
        owner, _nonres, errs = az.rules_for(a.user, a.namespace)
        owner = owner + _nonres
        missing = missing_rules(owner, wanted)
        if not missing:
            return
        groups = _q(list(a.user.get("groups") or []))
        msg = (
            f'user "{a.user.get("username", "")}" (groups={groups}) is attempting to grant RBAC permissions not '
            "currently held:\n" + "\n".join(sorted(compact_string(r) for r in missing))
        )
        if errs:
            msg += f"; resolution errors: [{', '.join(errs)}]"
        raise errors.forbidden(a.resource, a.group, a.name, msg)
