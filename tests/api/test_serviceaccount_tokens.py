"""ServiceAccount tokens over HTTP: TokenRequest (``kubectl create token``) with its
validation and bound objects, TokenReview of what it hands out (expiry on the cluster clock,
bound pod deleted), and the legacy token Secrets the token controller fills."""

from __future__ import annotations

import base64
import json

import aiohttp
import pytest
from _lifecycle import eventually

from mockkube.machinery.clock import Clock
from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

SA = "/api/v1/namespaces/default/serviceaccounts"


@pytest.fixture
async def env():
    clock = Clock(frozen=True)
    async with running_server(
        components=True, clock=clock, cluster="nodes: [{name: n1}]\ndeviceClasses: false\n"
    ) as server:
        async with aiohttp.ClientSession() as s:
            api = Api(s, server.url, server)
            assert (await api.post(SA, {"metadata": {"name": "builder"}}))[0] == 201
            yield api, clock


def _claims(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))


async def _review(api: Api, token: str, audiences: list[str] | None = None) -> dict:
    spec = {"token": token, **({"audiences": audiences} if audiences else {})}
    code, body, _ = await api.post(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec},
    )
    assert code == 201, body
    return body["status"]


async def test_token_request_defaults_and_review(env):
    api, clock = env
    code, body, _ = await api.post(
        f"{SA}/builder/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    )
    assert code == 201, body
    assert body["kind"] == "TokenRequest" and body["spec"]["expirationSeconds"] == 3600
    assert body["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    token = body["status"]["token"]
    claims = _claims(token)
    assert claims["sub"] == "system:serviceaccount:default:builder" and claims["exp"] - claims["iat"] == 3600
    status = await _review(api, token)
    assert status["authenticated"] is True
    user = status["user"]
    assert user["username"] == "system:serviceaccount:default:builder"
    assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert user["extra"]["authentication.kubernetes.io/credential-id"] == [f"JTI={claims['jti']}"]
    assert (await _review(api, token, ["other-audience"]))["authenticated"] is False
    clock.advance(3601)  # expired on the cluster clock
    assert (await _review(api, token))["authenticated"] is False
    assert (await _review(api, "not-a-token"))["authenticated"] is False


async def test_token_request_validation(env):
    api, _ = env
    code, body, _ = await api.post(f"{SA}/builder/token", {"spec": {"expirationSeconds": 60}})
    assert code == 422 and body["message"] == (
        'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 60: '
        "may not specify a duration less than 10 minutes"
    )
    code, body, _ = await api.post(f"{SA}/nobody/token", {"spec": {}})
    assert code == 404 and body["message"] == 'serviceaccounts "nobody" not found'
    code, body, _ = await api.post(
        f"{SA}/builder/token",
        {"spec": {"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}},
    )
    assert code == 400 and body["message"] == "cannot bind token to object of type apps/v1, Kind=Deployment"


async def test_pod_bound_token_names_pod_and_node_and_dies_with_the_pod(env):
    api, _ = env
    pod = {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "builder", "nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]},
    }
    code, created, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert code == 201, created
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": created["metadata"]["uid"]}
    code, body, _ = await api.post(f"{SA}/builder/token", {"spec": {"boundObjectRef": ref}})
    assert code == 201, body
    token = body["status"]["token"]
    user = (await _review(api, token))["user"]
    _, node, _ = await api.get("/api/v1/nodes/n1")
    assert user["extra"]["authentication.kubernetes.io/pod-name"] == ["p"]
    assert user["extra"]["authentication.kubernetes.io/pod-uid"] == [created["metadata"]["uid"]]
    assert user["extra"]["authentication.kubernetes.io/node-name"] == ["n1"]
    assert user["extra"]["authentication.kubernetes.io/node-uid"] == [node["metadata"]["uid"]]
    code, body, _ = await api.post(f"{SA}/default/token", {"spec": {"boundObjectRef": ref}})
    assert code == 400 and "to pod running with different serviceaccount name" in body["message"]
    code, body, _ = await api.post(f"{SA}/builder/token", {"spec": {"boundObjectRef": {**ref, "uid": "x"}}})
    assert code == 409 and "does not match the UID in record" in body["message"]
    assert (await api.delete("/api/v1/namespaces/default/pods/p", {"gracePeriodSeconds": 0}))[0] == 200
    assert (await _review(api, token))["authenticated"] is False


async def test_legacy_token_secret_is_filled_and_valid_while_it_exists(env):
    api, _ = env
    secret = {
        "metadata": {"name": "builder-token", "annotations": {"kubernetes.io/service-account.name": "builder"}},
        "type": "kubernetes.io/service-account-token",
    }
    assert (await api.post("/api/v1/namespaces/default/secrets", secret))[0] == 201
    path = "/api/v1/namespaces/default/secrets/builder-token"
    store, rt = api.server.store, api.server.registry.get("", "v1", "secrets")

    def filled() -> dict | None:
        e = store.get(rt, "default", "builder-token")
        return e.obj if e is not None and (e.obj.get("data") or {}).get("token") else None

    got = await eventually(filled, what="the token controller fills the Secret")
    data = got["data"]
    assert base64.b64decode(data["namespace"]) == b"default" and data["ca.crt"]
    token = base64.b64decode(data["token"]).decode()
    status = await _review(api, token)
    assert status["authenticated"] and status["user"]["username"] == "system:serviceaccount:default:builder"
    assert (await api.delete(path))[0] == 200
    assert (await _review(api, token))["authenticated"] is False


async def test_issuer_discovery_verifies_tokens(env):
    import jwt

    api, _ = env
    code, conf, _ = await api.get("/.well-known/openid-configuration")
    assert code == 200 and conf["issuer"] == "https://kubernetes.default.svc.cluster.local"
    assert conf["jwks_uri"].endswith("/openid/v1/jwks")
    code, keys, _ = await api.get("/openid/v1/jwks")
    assert code == 200 and len(keys["keys"]) == 1
    _, body, _ = await api.post(f"{SA}/builder/token", {"spec": {"audiences": ["vault"]}})
    token = body["status"]["token"]
    jwk = keys["keys"][0]
    assert jwt.get_unverified_header(token)["kid"] == jwk["kid"]
    key = jwt.PyJWK(jwk).key
    claims = jwt.decode(
        token,
        key,
        algorithms=[jwk["alg"]],
        audience="vault",
        issuer=conf["issuer"],
        options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
    )
    assert claims["sub"] == "system:serviceaccount:default:builder"


async def test_malformed_bodies_are_400_not_500(env):
    api, _ = env
    for body in (
        {"spec": []},
        {"spec": {"expirationSeconds": "x"}},
        {"spec": {"boundObjectRef": "pod"}},
        {"spec": {"audiences": "a"}},
    ):
        code, out, _ = await api.post(f"{SA}/builder/token", body)
        assert code == 400 and "cannot be handled as a TokenRequest" in out["message"], (body, out)
    code, out, _ = await api.post("/apis/authentication.k8s.io/v1/tokenreviews", {"spec": {"token": 5}})
    assert code == 400 and "cannot be handled as a TokenReview" in out["message"]
