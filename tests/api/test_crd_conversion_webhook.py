"""A CRD with ``conversion: Webhook`` calls a real HTTPS conversion webhook (ConversionReview
v1, caBundle trust) when a version other than the storage version is written or read."""

from __future__ import annotations

import base64
import http.server
import json
import shutil
import ssl
import subprocess
import threading

import pytest


def _cert(tmp_path) -> tuple[str, str, bytes]:
    """A self-signed certificate for 127.0.0.1 (openssl CLI): (cert file, key file, PEM)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    crt, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(crt),
            "-days",
            "1",
            "-subj",
            "/CN=webhook",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return str(crt), str(key), crt.read_bytes()


def _convert(obj: dict, desired: str) -> dict:
    out = dict(obj, apiVersion=desired)
    spec = dict(obj.get("spec") or {})
    if desired.endswith("/v1") and "cron" in spec:
        spec["cronSpec"] = spec.pop("cron")
    elif desired.endswith("/v1beta1") and "cronSpec" in spec:
        spec["cron"] = spec.pop("cronSpec")
    out["spec"] = spec
    return out


class _Handler(http.server.BaseHTTPRequestHandler):
    reviews: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.reviews.append(review)
        req = review["request"]
        body = json.dumps(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview",
                "response": {
                    "uid": req["uid"],
                    "result": {"status": "Success"},
                    "convertedObjects": [_convert(o, req["desiredAPIVersion"]) for o in req["objects"]],
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook(tmp_path):
    crt, key, pem = _cert(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    _Handler.reviews = []
    yield f"https://127.0.0.1:{server.server_address[1]}/convert", base64.b64encode(pem).decode(), server
    server.shutdown()
    server.server_close()


def _crd(url: str, ca: str) -> dict:
    def version(name: str, field: str, storage: bool) -> dict:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {field: {"type": "string"}}}},
                }
            },
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab"},
            "versions": [version("v1beta1", "cron", False), version("v1", "cronSpec", True)],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"url": url, "caBundle": ca}},
            },
        },
    }


BETA = "/apis/stable.example.com/v1beta1/namespaces/default/crontabs"
V1 = "/apis/stable.example.com/v1/namespaces/default/crontabs"


async def test_conversion_webhook_is_called(api, webhook):
    url, ca, server = webhook
    st, body, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd(url, ca))
    assert st == 201, body
    st, obj, _ = await api.post(
        BETA,
        {
            "apiVersion": "stable.example.com/v1beta1",
            "kind": "CronTab",
            "metadata": {"name": "t", "labels": {"a": "b"}},
            "spec": {"cron": "* * * * *"},
        },
    )
    assert st == 201, obj
    assert obj["apiVersion"] == "stable.example.com/v1beta1" and obj["spec"] == {"cron": "* * * * *"}
    review = _Handler.reviews[0]
    assert review["kind"] == "ConversionReview" and review["request"]["desiredAPIVersion"] == "stable.example.com/v1"
    st, obj, _ = await api.get(V1 + "/t")
    assert obj["spec"] == {"cronSpec": "* * * * *"} and obj["metadata"]["labels"] == {"a": "b"}
    st, lst, _ = await api.get(BETA)
    assert [i["spec"] for i in lst["items"]] == [{"cron": "* * * * *"}]
    st, obj, _ = await api.patch(BETA + "/t", {"spec": {"cron": "0 * * * *"}})
    assert st == 200 and obj["spec"] == {"cron": "0 * * * *"}
    st, obj, _ = await api.get(V1 + "/t")
    assert obj["spec"] == {"cronSpec": "0 * * * *"}

    server.shutdown()
    server.server_close()
    st, err, _ = await api.get(BETA + "/t")
    assert st == 500 and err["reason"] == "InternalError"
    assert "conversion webhook for stable.example.com/v1, Kind=CronTab failed" in err["message"]
