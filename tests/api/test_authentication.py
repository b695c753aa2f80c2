"""Authentication over HTTP: static tokens (--token-auth-file), ServiceAccount tokens,
anonymous requests and 401s that never say whether a user exists."""

from __future__ import annotations

import ssl

import aiohttp
import pytest

from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def _trusting(server) -> aiohttp.TCPConnector:
    """HTTPS to the server, trusting its CA, without a client certificate."""
    return aiohttp.TCPConnector(ssl=ssl.create_default_context(cadata=server.tls.ca_pem.decode()))


def _bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def secured(tmp_path):
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,1001,"devs,ops"\nbob-token,bob,1002\n')
    async with running_server(authorization_mode="RBAC", token_auth_file=str(tokens)) as server:
        async with aiohttp.ClientSession(connector=_trusting(server)) as s:
            yield Api(s, server.url, server), server


async def _whoami(api: Api, headers: dict) -> tuple[int, dict]:
    code, body, _ = await api.post(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        headers=headers,
    )
    return code, body


async def test_static_tokens_and_bad_tokens(secured):
    api, server = secured
    code, body = await _whoami(api, _bearer("alice-token"))
    assert code == 201 and body["status"]["userInfo"] == {
        "username": "alice",
        "uid": "1001",
        "groups": ["devs", "ops", "system:authenticated"],
    }
    for bad in ("wrong", "alice-token2", "bob"):
        code, body, _ = await api.get("/api/v1/namespaces", headers=_bearer(bad))
        assert (code, body) == (401, UNAUTHORIZED)
    code, body, _ = await api.get("/api/v1/namespaces", headers=_bearer("bob-token"))
    assert code == 403 and body["message"].startswith('namespaces is forbidden: User "bob" cannot list')
    code, _, _ = await api.get("/api/v1/namespaces", headers=_bearer(server.admin_token))
    assert code == 200


async def test_anonymous_requests(secured):
    api, _ = secured
    code, body = await _whoami(api, {})
    assert code == 403  # system:anonymous is not system:authenticated: no basic-user role
    code, _, _ = await api.get("/version")  # system:public-info-viewer covers unauthenticated
    assert code == 200
    code, body, _ = await api.get("/api/v1/pods")
    assert code == 403 and 'User "system:anonymous" cannot list resource "pods"' in body["message"]


async def test_anonymous_auth_false_is_401():
    async with running_server(anonymous_auth=False) as server:
        async with aiohttp.ClientSession(connector=_trusting(server)) as s:
            api = Api(s, server.url, server)
            assert (await api.get("/version"))[:2] == (401, UNAUTHORIZED)
            assert (await api.get("/api/v1/pods", headers=_bearer(server.admin_token)))[0] == 200


async def test_service_account_token_can_do_what_its_role_grants(secured):
    api, server = secured
    admin = _bearer(server.admin_token)
    sa = "/api/v1/namespaces/default/serviceaccounts"
    assert (await api.post(sa, {"metadata": {"name": "operator"}}, headers=admin))[0] == 201
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {
        "metadata": {"name": "cm-editor"},
        "rules": [{"verbs": ["get", "list", "create"], "apiGroups": [""], "resources": ["configmaps"]}],
    }
    assert (await api.post(f"{rbac}/clusterroles", role, headers=admin))[0] == 201
    rb = {
        "metadata": {"name": "operator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-editor"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "default"}],
    }
    assert (await api.post(f"{rbac}/namespaces/default/rolebindings", rb, headers=admin))[0] == 201
    code, body, _ = await api.post(f"{sa}/operator/token", {"spec": {}}, headers=admin)
    token = _bearer(body["status"]["token"])
    assert (await api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}}, headers=token))[
        0
    ] == 201
    assert (await api.get("/api/v1/namespaces/default/configmaps", headers=token))[0] == 200
    code, body, _ = await api.delete("/api/v1/namespaces/default/configmaps/c", headers=token)
    assert code == 403 and body["message"] == (
        'configmaps "c" is forbidden: User "system:serviceaccount:default:operator" cannot delete resource '
        '"configmaps" in API group "" in the namespace "default"'
    )
    assert (await api.get("/api/v1/namespaces/kube-system/configmaps", headers=token))[0] == 403
    # the ServiceAccount's deletion ends its tokens
    assert (await api.delete(f"{sa}/operator", headers=admin))[0] == 200
    assert (await api.get("/api/v1/namespaces/default/configmaps", headers=token))[:2] == (401, UNAUTHORIZED)


async def test_token_file_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("only,two\n")
    with pytest.raises(ValueError, match="must have at least 3 columns"):
        async with running_server(token_auth_file=str(bad)):
            pass
