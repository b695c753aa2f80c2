"""RBAC evaluation, request attributes and 403 wording, pinned against upstream's behaviour."""

from __future__ import annotations

import pytest

from mockkube.apiserver.authz.authorizer import Authorizer, forbidden, parse_modes
from mockkube.apiserver.authz.rbac import Policy, covers
from mockkube.apiserver.authz.requestinfo import request_attributes

BOB = {"username": "bob", "groups": ["devs", "system:authenticated"]}


def _attrs(method, path, query=None, user=BOB):
    return request_attributes(method, path, query or {}, user)


@pytest.mark.parametrize(
    "method,path,query,want",
    [
        ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "ns", "", "pods", "", "")),
        ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "ns", "", "pods", "", "")),
        ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "ns", "", "pods", "", "")),
        (
            "GET",
            "/api/v1/namespaces/ns/pods",
            {"fieldSelector": "metadata.name=p1"},
            ("list", "ns", "", "pods", "", "p1"),
        ),
        ("GET", "/api/v1/namespaces/ns/pods/p1/log", {}, ("get", "ns", "", "pods", "log", "p1")),
        (
            "DELETE",
            "/apis/apps/v1/namespaces/ns/deployments",
            {},
            ("deletecollection", "ns", "apps", "deployments", "", ""),
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            {},
            ("patch", "ns", "apps", "deployments", "scale", "d"),
        ),
        ("GET", "/api/v1/namespaces/foo", {}, ("get", "foo", "", "namespaces", "", "foo")),
        ("PUT", "/api/v1/namespaces/foo/finalize", {}, ("update", "foo", "", "namespaces", "finalize", "foo")),
        (
            "POST",
            "/apis/resource.k8s.io/v1/resourceslices",
            {},
            ("create", "", "resource.k8s.io", "resourceslices", "", ""),
        ),
    ],
)
def test_request_attributes(method, path, query, want):
    a = _attrs(method, path, query)
    assert a.resource_request
    assert (a.verb, a.namespace, a.api_group, a.resource, a.subresource, a.name) == want


@pytest.mark.parametrize("path", ["/version", "/healthz", "/api", "/apis/apps", "/apis/apps/v1", "/openapi/v3"])
def test_non_resource_paths(path):
    a = _attrs("GET", path)
    assert not a.resource_request and a.verb == "get" and a.path == path


def _policy(rules, ns_rules=None, subjects=None, missing_role=False):
    subj = subjects or [{"kind": "User", "name": "bob"}]
    roles = [{"metadata": {"name": "r", "namespace": "ns"}, "rules": ns_rules or []}]
    croles = [{"metadata": {"name": "c"}, "rules": rules}]
    rbs = [{"metadata": {"name": "rb", "namespace": "ns"}, "roleRef": {"kind": "Role", "name": "r"}, "subjects": subj}]
    crbs = [
        {
            "metadata": {"name": "crb"},
            "roleRef": {"kind": "ClusterRole", "name": "gone" if missing_role else "c"},
            "subjects": subj,
        }
    ]
    return Policy.of(roles, croles, rbs, crbs)


def test_rules_verbs_groups_resources_names_and_urls():
    p = _policy(
        [
            {
                "verbs": ["get"],
                "apiGroups": ["apps"],
                "resources": ["deployments", "*/scale"],
                "resourceNames": ["web"],
            },
            {"verbs": ["get"], "nonResourceURLs": ["/logs/*"]},
        ],
        ns_rules=[{"verbs": ["*"], "apiGroups": [""], "resources": ["configmaps"]}],
    )
    assert p.authorize(_attrs("GET", "/apis/apps/v1/namespaces/x/deployments/web"))[0]
    assert not p.authorize(_attrs("GET", "/apis/apps/v1/namespaces/x/deployments/api"))[0]
    assert p.authorize(_attrs("GET", "/apis/apps/v1/namespaces/x/statefulsets/web/scale"))[0]
    assert not p.authorize(_attrs("GET", "/apis/apps/v1/namespaces/x/statefulsets/web"))[0]
    assert not p.authorize(_attrs("GET", "/apis/apps/v1/namespaces/x/deployments"))[0]  # list has no name
    assert p.authorize(_attrs("GET", "/logs/kube.log"))[0]
    assert not p.authorize(_attrs("POST", "/logs/kube.log"))[0]
    assert p.authorize(_attrs("DELETE", "/api/v1/namespaces/ns/configmaps"))[0]  # RoleBinding in ns
    assert not p.authorize(_attrs("DELETE", "/api/v1/namespaces/other/configmaps"))[0]


def test_subjects_groups_and_serviceaccounts():
    p = _policy(
        [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}],
        subjects=[{"kind": "Group", "name": "devs"}, {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"}],
    )
    assert p.authorize(_attrs("GET", "/api/v1/pods"))[0]
    sa = {"username": "system:serviceaccount:ci:builder", "groups": ["system:serviceaccounts"]}
    assert p.authorize(_attrs("GET", "/api/v1/pods", user=sa))[0]
    assert not p.authorize(_attrs("GET", "/api/v1/pods", user={"username": "eve"}))[0]


def test_missing_role_is_the_reason():
    p = _policy([], missing_role=True)
    ok, why = p.authorize(_attrs("GET", "/api/v1/pods"))
    assert not ok and why == 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'


def test_forbidden_messages_as_upstream():
    a = _attrs("GET", "/api/v1/namespaces/default/pods")
    assert forbidden(a).status()["message"] == (
        'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"'
    )
    a = _attrs("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale")
    e = forbidden(a).status()
    assert e["message"] == (
        'deployments.apps "d" is forbidden: User "bob" cannot patch resource "deployments/scale" '
        'in API group "apps" in the namespace "ns"'
    )
    assert e["details"] == {"name": "d", "group": "apps", "kind": "deployments"} and e["code"] == 403
    a = _attrs("GET", "/apis/resource.k8s.io/v1/deviceclasses")
    assert forbidden(a).status()["message"].endswith('in API group "resource.k8s.io" at the cluster scope')
    a = _attrs("GET", "/metrics")
    assert forbidden(a).status()["message"] == 'forbidden: User "bob" cannot get path "/metrics"'


def test_modes_union_and_masters():
    empty = Policy()
    az = Authorizer(parse_modes("Node,RBAC"), lambda: empty)
    assert not az.authorize(_attrs("GET", "/api/v1/pods"))[0]
    assert az.authorize(_attrs("GET", "/api/v1/pods", user={"username": "x", "groups": ["system:masters"]}))[0]
    node = {"username": "system:node:n1", "groups": ["system:nodes", "system:authenticated"]}
    assert az.authorize(_attrs("PUT", "/api/v1/nodes/n1/status", user=node))[0]
    assert not az.authorize(_attrs("DELETE", "/api/v1/namespaces/x/secrets/s", user=node))[0]
    assert Authorizer(["AlwaysDeny"], lambda: empty).authorize(_attrs("GET", "/version")) == (
        False,
        "Everything is forbidden.",
    )
    with pytest.raises(ValueError, match="not a valid mode"):
        parse_modes("RBAC,ABAC2")


def test_covers_for_escalation_checks():
    owner = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/status"]}]
    assert covers(owner, {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    assert covers(owner, {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes/status"]})
    assert not covers(owner, {"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]})
    assert not covers(owner, {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]})
    assert covers(
        [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        {"verbs": ["get"], "apiGroups": ["x"], "resources": ["y"], "resourceNames": ["z"]},
    )
