"""The authorization attributes of an HTTP request, as upstream's RequestInfoFactory
(``apiserver/pkg/endpoints/request/requestinfo.go``) reads them from the path alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass
class Attributes:
    """What an authorizer decides on: a resource request or a non-resource path."""

    user: dict
    verb: str
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def username(self) -> str:
        return self.user.get("username", "")

    @property
    def groups(self) -> list[str]:
        return list(self.user.get("groups") or [])


def request_attributes(method: str, path: str, query: Mapping[str, str], user: dict) -> Attributes:
    """Attributes of ``method path?query`` made by ``user`` (upstream's NewRequestInfo)."""
    parts = [p for p in path.strip("/").split("/") if p != ""] if path.strip("/") else []
    nonresource = Attributes(user=user, verb=method.lower(), resource_request=False, path=path)
    if not parts or parts[0] not in ("api", "apis"):
        return nonresource
    if parts[0] == "apis":
        if len(parts) < 3:
            return nonresource
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        if len(parts) < 2:
            return nonresource
        group, version, rest = "", parts[1], parts[2:]
    if not rest:
        return nonresource
    verb = _VERBS.get(method.upper(), method.lower())
    if rest[0] == "watch":  # the deprecated /watch/ prefix
        verb, rest = "watch", rest[1:]
    a = Attributes(user=user, verb=verb, api_group=group, api_version=version, path=path)
    if rest and rest[0] == "namespaces":
        if len(rest) > 1:
            a.namespace = rest[1]
            if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
    if rest:
        a.resource = rest[0]
    if len(rest) >= 2:
        a.name = rest[1]
    if len(rest) >= 3:
        a.subresource = rest[2]
    if not a.name and a.verb == "get":
        a.verb = "watch" if query.get("watch") in ("true", "1") else "list"
        name = _exact_name(query.get("fieldSelector", ""))
        if name:
            a.name = name
    if not a.name and a.verb == "delete":
        a.verb = "deletecollection"
    return a


def _exact_name(selector: str) -> str:
    for term in selector.split(","):
        for op in ("==", "="):
            k, sep, v = term.partition(op)
            if sep and k.strip() == "metadata.name" and "!" not in k:
                return v.strip()
    return ""
