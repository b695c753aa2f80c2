"""The Node authorizer, coarsely: a kubelet identity (``system:node:<name>`` in group
``system:nodes``) gets the rules of upstream's ``system:node`` role (NodeRules). Upstream
narrows reads of secrets, configmaps, volumes and claims further to what the node's pods
reference (its graph); mockkube does not keep that graph. Creating and deleting
ResourceSlices is narrowed to the node's own slices by admission (``restrict``, upstream's
NodeRestriction)."""

from __future__ import annotations

from mockkube.apiserver.authz.rbac import rule_allows
from mockkube.apiserver.authz.requestinfo import Attributes

NODES_GROUP = "system:nodes"
NODE_PREFIX = "system:node:"
_READ = ["get", "list", "watch"]


def _r(verbs: list[str], group: str, resources: list[str]) -> dict:
    return {"verbs": verbs, "apiGroups": [group], "resources": resources}


NODE_RULES = [
    _r(["create", "delete"], "authentication.k8s.io", ["tokenreviews"]),
    _r(["create"], "authorization.k8s.io", ["localsubjectaccessreviews", "subjectaccessreviews"]),
    _r(["create", "get", "list", "watch", "delete", "patch", "update"], "", ["nodes"]),
    _r(["patch", "update"], "", ["nodes/status"]),
    _r(["create", "patch", "update"], "", ["events"]),
    _r(["create", "patch", "update"], "events.k8s.io", ["events"]),
    _r(_READ, "", ["pods"]),
    _r(["create", "delete"], "", ["pods"]),
    _r(["patch", "update"], "", ["pods/status"]),
    _r(["create"], "", ["pods/eviction"]),
    _r(["get"], "", ["configmaps", "secrets", "persistentvolumeclaims", "persistentvolumes"]),
    _r(_READ, "", ["services", "endpoints"]),
    _r(_READ, "discovery.k8s.io", ["endpointslices"]),
    _r(["get", "update", "patch"], "", ["persistentvolumeclaims/status"]),
    _r(["create"], "", ["serviceaccounts/token"]),
    _r(["get"], "storage.k8s.io", ["volumeattachments"]),
    _r(_READ, "storage.k8s.io", ["csidrivers"]),
    _r(["get", "create", "update", "patch", "delete"], "storage.k8s.io", ["csinodes"]),
    _r(_READ, "node.k8s.io", ["runtimeclasses"]),
    _r(["get", "create", "update", "patch", "delete"], "coordination.k8s.io", ["leases"]),
    _r(["create", "get", "list", "watch"], "certificates.k8s.io", ["certificatesigningrequests"]),
    _r(["get"], "resource.k8s.io", ["resourceclaims"]),
    _r(_READ + ["create", "update", "patch", "delete", "deletecollection"], "resource.k8s.io", ["resourceslices"]),
]


def node_name(user: dict) -> str:
    """The node a kubelet identity acts for, or ""."""
    name = user.get("username", "")
    if name.startswith(NODE_PREFIX) and NODES_GROUP in (user.get("groups") or ()):
        return name[len(NODE_PREFIX) :]
    return ""


def authorize(attrs: Attributes) -> tuple[bool, str]:
    if not node_name(attrs.user):
        return False, ""
    if attrs.resource_request and any(rule_allows(attrs, r) for r in NODE_RULES):
        return True, ""
    return False, ""


def restrict(a) -> None:
    """NodeRestriction for ResourceSlices (admission): a node creates and deletes only slices
    of its own node; the node authorizer cannot see the object on create."""
    node = node_name(a.user)
    if not node or a.group != "resource.k8s.io" or a.resource != "resourceslices" or a.subresource:
        return
    op = a.operation.lower()
    obj = a.obj if op == "create" else a.old if op == "delete" else None
    if obj is not None and (obj.get("spec") or {}).get("nodeName") != node:
        from mockkube.machinery import errors

        raise errors.forbidden(
            a.resource, a.group, a.name, f"can only {op} ResourceSlice with the same NodeName as the requesting node"
        )
