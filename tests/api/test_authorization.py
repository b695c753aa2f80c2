"""--authorization-mode=RBAC over HTTP: 403s as upstream, grants through bindings, the
impersonate verb, and the access reviews answered by the same authorizer."""

from __future__ import annotations

import aiohttp
import pytest

from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

AS_BOB = {"Impersonate-User": "bob"}


@pytest.fixture
async def rbac():
    async with running_server(authorization_mode="RBAC") as server:
        # the admin's client certificate on every request (impersonating bob where a test says so)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.tls.client_context())) as s:
            yield Api(s, server.url, server)


async def test_no_binding_is_403_with_upstream_message(rbac):
    code, body, _ = await rbac.get("/api/v1/namespaces/default/pods", headers=AS_BOB)
    assert code == 403
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
        'in the namespace "default"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    code, body, _ = await rbac.get("/metrics", headers=AS_BOB)
    assert code == 403 and body["message"] == 'forbidden: User "bob" cannot get path "/metrics"'
    code, _, _ = await rbac.get("/version", headers=AS_BOB)  # system:public-info-viewer
    assert code == 200
    code, _, _ = await rbac.get("/api/v1/namespaces/default/pods")  # the default admin
    assert code == 200


async def test_rolebinding_grants_exactly_its_rules(rbac):
    role = {
        "metadata": {"name": "cm-reader"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}],
    }
    assert (await rbac.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", role))[0] == 201
    rb = {
        "metadata": {"name": "bob-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    assert (await rbac.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", rb))[0] == 201
    assert (await rbac.get("/api/v1/namespaces/default/configmaps", headers=AS_BOB))[0] == 200
    assert (await rbac.get("/api/v1/namespaces/kube-system/configmaps", headers=AS_BOB))[0] == 403
    code, body, _ = await rbac.post(
        "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}}, headers=AS_BOB
    )
    assert code == 403 and "cannot create resource" in body["message"]
    # a binding to a role that does not exist says so in the reason
    rb2 = {**rb, "metadata": {"name": "dangling"}, "roleRef": {**rb["roleRef"], "name": "nope"}}
    assert (await rbac.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", rb2))[0] == 201
    code, body, _ = await rbac.delete("/api/v1/namespaces/default/configmaps/x", headers=AS_BOB)
    assert code == 403 and body["message"].endswith(': RBAC: role.rbac.authorization.k8s.io "nope" not found')


async def test_impersonation_needs_the_impersonate_verb(rbac):
    # bob (impersonated by the admin) may not impersonate further: only one level of headers
    # exists, so check the verb itself through a review
    sar = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": "bob", "resourceAttributes": {"verb": "impersonate", "resource": "users", "name": "alice"}},
    }
    code, body, _ = await rbac.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert code == 201 and body["status"]["allowed"] is False
    code, body, _ = await rbac.get("/api/v1/pods", headers={"Impersonate-Group": "system:masters"})
    assert code == 400  # groups without a user


async def test_access_reviews_ask_the_authorizer(rbac):
    ssar = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}},
    }
    code, body, _ = await rbac.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar, headers=AS_BOB)
    assert code == 201 and body["status"] == {"allowed": False}
    code, body, _ = await rbac.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar)
    assert body["status"] == {"allowed": True}
    ssrr = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}}
    code, body, _ = await rbac.post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", ssrr, headers=AS_BOB)
    assert code == 201
    rules = body["status"]["resourceRules"]
    assert {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    } in rules
    assert not any("pods" in r["resources"] for r in rules)
    assert body["status"]["incomplete"] is False


async def test_always_allow_is_the_default(api):
    assert (await api.get("/api/v1/namespaces/default/pods", headers=AS_BOB))[0] == 200


RBAC_API = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"


async def _grant(api: Api, name: str, rules: list[dict]) -> None:
    assert (await api.post(f"{RBAC_API}/roles", {"metadata": {"name": name}, "rules": rules}))[0] == 201
    rb = {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    assert (await api.post(f"{RBAC_API}/rolebindings", rb))[0] == 201


async def test_no_escalation_through_roles_and_bindings(rbac):
    await _grant(
        rbac,
        "rbac-writer",
        [
            {
                "verbs": ["create", "update"],
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["roles", "rolebindings"],
            },
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
        ],
    )
    held = {"metadata": {"name": "reader"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}
    assert (await rbac.post(f"{RBAC_API}/roles", held, headers=AS_BOB))[0] == 201
    more = {
        "metadata": {"name": "deleter"},
        "rules": [{"verbs": ["delete", "get"], "apiGroups": [""], "resources": ["pods", "secrets"]}],
    }
    code, body, _ = await rbac.post(f"{RBAC_API}/roles", more, headers=AS_BOB)
    assert code == 403
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "bob" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["delete" "get"]}'
    )
    bind = {
        "metadata": {"name": "bob-edit"},
        "subjects": [{"kind": "User", "name": "bob"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
    }
    code, body, _ = await rbac.post(f"{RBAC_API}/rolebindings", bind, headers=AS_BOB)
    assert code == 403 and "is attempting to grant RBAC permissions not currently held" in body["message"]
    ok = {**bind, "metadata": {"name": "bob-reader"}, "roleRef": {**bind["roleRef"], "kind": "Role", "name": "reader"}}
    assert (await rbac.post(f"{RBAC_API}/rolebindings", ok, headers=AS_BOB))[0] == 201
    # the escalate and bind verbs lift the checks, as upstream
    await _grant(
        rbac,
        "escalator",
        [
            {"verbs": ["escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]},
            {
                "verbs": ["bind"],
                "apiGroups": ["rbac.authorization.k8s.io"],
                "resources": ["clusterroles"],
                "resourceNames": ["edit"],
            },
        ],
    )
    assert (await rbac.post(f"{RBAC_API}/roles", more, headers=AS_BOB))[0] == 201
    assert (await rbac.post(f"{RBAC_API}/rolebindings", bind, headers=AS_BOB))[0] == 201


async def test_node_identity_writes_only_its_own_resourceslices():
    async with running_server(authorization_mode="Node,RBAC") as server:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=server.tls.client_context())) as s:
            api = Api(s, server.url, server)
            n1 = {"Impersonate-User": "system:node:n1", "Impersonate-Group": "system:nodes"}
            path = "/apis/resource.k8s.io/v1/resourceslices"

            def slice_for(node: str, name: str) -> dict:
                return {
                    "metadata": {"name": name},
                    "spec": {
                        "driver": "gpu.example.com",
                        "nodeName": node,
                        "pool": {"name": node, "resourceSliceCount": 1},
                    },
                }

            assert (await api.post(path, slice_for("n1", "own"), headers=n1))[0] == 201
            code, body, _ = await api.post(path, slice_for("n2", "other"), headers=n1)
            assert code == 403 and body["message"] == (
                'resourceslices.resource.k8s.io "other" is forbidden: can only create ResourceSlice with the same '
                "NodeName as the requesting node"
            )
            assert (await api.post(path, slice_for("n2", "other")))[0] == 201  # the admin may
            code, body, _ = await api.delete(f"{path}/other", headers=n1)
            assert code == 403 and "can only delete ResourceSlice" in body["message"]
            assert (await api.delete(f"{path}/own", headers=n1))[0] == 200
            # the Node authorizer: a node reads pods, but not secrets' lists
            assert (await api.get("/api/v1/pods", headers=n1))[0] == 200
            assert (await api.get("/api/v1/namespaces/default/secrets", headers=n1))[0] == 403


async def test_bootstrap_roles_charts_bind_exist(rbac):
    rb = "/apis/rbac.authorization.k8s.io/v1"
    for path in (
        "clusterroles/system:auth-delegator",
        "clusterroles/system:service-account-issuer-discovery",
        "clusterrolebindings/system:service-account-issuer-discovery",
        "clusterroles/view",
        "namespaces/kube-system/roles/extension-apiserver-authentication-reader",
    ):
        assert (await rbac.get(f"{rb}/{path}"))[0] == 200, path
    # a ServiceAccount (any) may read the issuer discovery documents
    sa = {"Impersonate-User": "system:serviceaccount:default:x", "Impersonate-Group": "system:serviceaccounts"}
    assert (await rbac.get("/.well-known/openid-configuration", headers=sa))[0] == 200
    assert (await rbac.get("/openid/v1/jwks", headers=AS_BOB))[0] == 403


async def test_cel_authorizer_in_policies_asks_rbac(rbac):
    adm = "/apis/admissionregistration.k8s.io/v1"
    policy = {
        "metadata": {"name": "secret-readers-only"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
                ]
            },
            "validations": [
                {
                    "expression": "authorizer.group('').resource('secrets').namespace(object.metadata.namespace)"
                    ".check('list').allowed()",
                    "message": "only secret readers",
                }
            ],
        },
    }
    assert (await rbac.post(f"{adm}/validatingadmissionpolicies", policy))[0] == 201
    binding = {
        "metadata": {"name": "secret-readers-only"},
        "spec": {"policyName": "secret-readers-only", "validationActions": ["Deny"]},
    }
    assert (await rbac.post(f"{adm}/validatingadmissionpolicybindings", binding))[0] == 201
    await _grant(rbac, "cm-maker", [{"verbs": ["create"], "apiGroups": [""], "resources": ["configmaps"]}])
    code, body, _ = await rbac.post(
        "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}}, headers=AS_BOB
    )
    assert code == 422 and "only secret readers" in body["message"]  # Invalid: no reason given
    assert (await rbac.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}}))[0] == 201
