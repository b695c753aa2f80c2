"""Admission webhooks over HTTP against a real HTTPS webhook server: validating denials and
warnings, JSONPatch mutations and reinvocation, selectors and matchConditions, failure
policies, timeouts, service references, and a responsive API while a webhook is slow."""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
import time

import aiohttp
import pytest

from mockkube.apiserver import certs
from mockkube.testing.cluster import running_server
from tests.api.conftest import Api

ADM = "/apis/admissionregistration.k8s.io/v1"
CMS = "/api/v1/namespaces/default/configmaps"


class Hooks(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.calls: list[tuple[str, dict]] = []
        self.ca = certs.make_ca("webhook-ca")
        pair = certs.make_serving(self.ca, ["127.0.0.1", "hooks.webhooks.svc"])
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        import tempfile

        with tempfile.NamedTemporaryFile("wb", suffix=".pem") as c, tempfile.NamedTemporaryFile("wb") as k:
            c.write(pair.cert_pem), k.write(pair.key_pem)
            c.flush(), k.flush()
            ctx.load_cert_chain(c.name, k.name)
        self.socket = ctx.wrap_socket(self.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server_address[1]}"
        self.ca_bundle = base64.b64encode(self.ca.cert_pem).decode()


def _allow(uid: str, **extra) -> dict:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": True, **extra},
    }


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        req = review["request"]
        self.server.calls.append((self.path, req))
        path = self.path.split("?")[0]
        uid = req["uid"]
        obj = req.get("object") or {}
        if path == "/deny":
            bad = (obj.get("metadata") or {}).get("name", "").startswith("bad")
            out = (
                _allow(uid)
                if not bad
                else {
                    "response": {
                        "uid": uid,
                        "allowed": False,
                        "status": {
                            "code": 403,
                            "reason": "Forbidden",
                            "message": "names starting with bad are not allowed",
                        },
                    }
                }
            )
        elif path == "/warn":
            out = _allow(uid, warnings=["configmaps are watched"])
        elif path == "/label":
            labels = (obj.get("metadata") or {}).get("labels")
            ops = [{"op": "add", "path": "/metadata/labels", "value": {}}] if labels is None else []
            ops.append({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})
            out = _allow(uid, patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
        elif path == "/annotate":
            ann = (obj.get("metadata") or {}).get("annotations")
            ops = [] if ann is not None else [{"op": "add", "path": "/metadata/annotations", "value": {}}]
            ops.append({"op": "add", "path": "/metadata/annotations/seen", "value": "1"})
            out = _allow(uid, patchType="JSONPatch", patch=base64.b64encode(json.dumps(ops).encode()).decode())
        elif path == "/slow":
            time.sleep(2)
            out = _allow(uid)
        else:
            out = _allow(uid)
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", **out}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def hooks():
    h = Hooks()
    t = threading.Thread(target=h.serve_forever, daemon=True)
    t.start()
    yield h
    h.shutdown()
    h.server_close()


@pytest.fixture
async def api(hooks):
    port = hooks.server_address[1]
    async with running_server(service_addresses={"webhooks/hooks": f"127.0.0.1:{port}"}) as server:
        async with aiohttp.ClientSession() as s:
            yield Api(s, server.url, server)


def _webhook(hooks: Hooks, name: str, path: str, **extra) -> dict:
    wh = {
        "name": name,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": hooks.url + path, "caBundle": hooks.ca_bundle},
        "rules": [
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}
        ],
    }
    wh.update(extra)
    return wh


async def _config(api: Api, kind: str, name: str, *webhooks: dict) -> None:
    plural = "validatingwebhookconfigurations" if kind == "Validating" else "mutatingwebhookconfigurations"
    code, body, _ = await api.post(f"{ADM}/{plural}", {"metadata": {"name": name}, "webhooks": list(webhooks)})
    assert code == 201, body


async def test_validating_webhook_denies_with_its_status(api, hooks):
    await _config(api, "Validating", "deny", _webhook(hooks, "deny.example.com", "/deny"))
    code, body, _ = await api.post(CMS, {"metadata": {"name": "bad-one"}})
    assert code == 403
    assert body["message"] == (
        'admission webhook "deny.example.com" denied the request: names starting with bad are not allowed'
    )
    assert body["reason"] == "Forbidden"
    assert (await api.post(CMS, {"metadata": {"name": "good"}}))[0] == 201
    path, req = hooks.calls[-1]
    assert path == "/deny?timeout=10s"
    assert req["operation"] == "CREATE" and req["namespace"] == "default" and req["name"] == "good"
    assert req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["userInfo"]["username"] == "kubernetes-admin"
    assert req["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert api.server.store.get(api.server.registry.get("", "v1", "configmaps"), "default", "bad-one") is None


async def test_warnings_reach_the_client(api, hooks):
    await _config(api, "Validating", "warn", _webhook(hooks, "warn.example.com", "/warn"))
    code, _, headers = await api.post(CMS, {"metadata": {"name": "w"}})
    assert code == 201 and headers.getall("Warning") == ['299 - "configmaps are watched"']


async def test_mutating_webhooks_patch_and_reinvoke(api, hooks):
    await _config(
        api,
        "Mutating",
        "mutate",
        _webhook(hooks, "annotate.example.com", "/annotate", reinvocationPolicy="IfNeeded"),
        _webhook(hooks, "label.example.com", "/label"),
    )
    code, body, _ = await api.post(CMS, {"metadata": {"name": "m"}})
    assert code == 201, body
    assert body["metadata"]["labels"] == {"mutated": "yes"}
    assert body["metadata"]["annotations"] == {"seen": "1"}
    paths = [p.split("?")[0] for p, _ in hooks.calls]
    assert paths == ["/annotate", "/label", "/annotate"]  # reinvoked once: a later webhook changed the object


async def test_selectors_and_match_conditions(api, hooks):
    await _config(
        api,
        "Validating",
        "picky",
        _webhook(
            hooks,
            "picky.example.com",
            "/deny",
            objectSelector={"matchLabels": {"checked": "true"}},
            matchConditions=[{"name": "not-kube-root", "expression": "object.metadata.name != 'bad-skip'"}],
        ),
    )
    assert (await api.post(CMS, {"metadata": {"name": "bad-unlabelled"}}))[0] == 201  # objectSelector
    assert (await api.post(CMS, {"metadata": {"name": "bad-skip", "labels": {"checked": "true"}}}))[0] == 201
    code, _, _ = await api.post(CMS, {"metadata": {"name": "bad-checked", "labels": {"checked": "true"}}})
    assert code == 403


async def test_failure_policies(api, hooks):
    dead = "https://127.0.0.1:9/nothing"
    await _config(
        api, "Validating", "dead", {**_webhook(hooks, "dead.example.com", "/"), "clientConfig": {"url": dead}}
    )
    code, body, _ = await api.post(CMS, {"metadata": {"name": "x"}})
    assert code == 500 and body["reason"] == "InternalError"
    assert body["message"].startswith(
        'Internal error occurred: failed calling webhook "dead.example.com": '
        'failed to call webhook: Post "https://127.0.0.1:9/nothing?timeout=10s"'
    )
    assert (
        await api.patch(
            f"{ADM}/validatingwebhookconfigurations/dead",
            [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}],
            ct="application/json-patch+json",
        )
    )[0] == 200
    assert (await api.post(CMS, {"metadata": {"name": "x"}}))[0] == 201


async def test_timeout_and_a_responsive_api(api, hooks):
    await _config(api, "Validating", "slow", _webhook(hooks, "slow.example.com", "/slow", timeoutSeconds=1))
    code, body, _ = await api.post(CMS, {"metadata": {"name": "late"}})
    assert code == 500 and "context deadline exceeded" in body["message"]
    assert (
        await api.patch(
            f"{ADM}/validatingwebhookconfigurations/slow",
            [{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 5}],
            ct="application/json-patch+json",
        )
    )[0] == 200
    import asyncio

    write = asyncio.ensure_future(api.post(CMS, {"metadata": {"name": "patient"}}))
    while not any(p.startswith("/slow") and r["name"] == "patient" for p, r in hooks.calls):
        await asyncio.sleep(0.01)
    t0 = time.monotonic()
    assert (await api.get("/api/v1/namespaces"))[0] == 200
    assert time.monotonic() - t0 < 0.5  # answered while the webhook still sleeps
    assert not write.done()
    assert (await write)[0] == 201


async def test_service_reference_through_the_service_map(api, hooks):
    wh = _webhook(hooks, "svc.example.com", "/deny")
    wh["clientConfig"] = {
        "service": {"namespace": "webhooks", "name": "hooks", "path": "/deny"},
        "caBundle": hooks.ca_bundle,
    }
    await _config(api, "Validating", "svc", wh)
    code, body, _ = await api.post(CMS, {"metadata": {"name": "bad-svc"}})
    assert code == 403 and "denied the request" in body["message"]


async def test_configuration_validation(api, hooks):
    bad = {
        "metadata": {"name": "bad"},
        "webhooks": [
            {
                "name": "short",
                "clientConfig": {"url": "http://x.example.com"},
                "admissionReviewVersions": ["v2"],
                "timeoutSeconds": 31,
            }
        ],
    }
    code, body, _ = await api.post(f"{ADM}/validatingwebhookconfigurations", bad)
    assert code == 422
    msg = body["message"]
    assert 'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments' in msg
    assert "webhooks[0].sideEffects: Required value" in msg
    assert "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds" in msg
    assert "'https' is the only allowed URL scheme" in msg
