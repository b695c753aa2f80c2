"""/openapi/v3 index, per-group-version documents and their cache semantics (kube-openapi handler3)."""

from __future__ import annotations

import hashlib
import json

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from mockkube.apiserver.http import openapi

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


async def _client() -> TestClient:
    app = web.Application()
    openapi.setup(app, now=lambda: NOW)
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


async def test_index_lists_every_group_version_with_hash():
    client = await _client()
    try:
        resp = await client.get("/openapi/v3", headers={"Accept": "application/json, */*"})
        assert resp.status == 200
        assert resp.content_type == "application/json"
        body = await resp.read()
        assert resp.headers["Etag"] == '"' + hashlib.sha512(body).hexdigest().upper() + '"'
        paths = json.loads(body)["paths"]
        assert set(paths) == {
            "api/v1",
            "apis/apiextensions.k8s.io/v1",
            "apis/apps/v1",
            "apis/autoscaling/v1",
            "apis/autoscaling/v2",
            "apis/certificates.k8s.io/v1",
            "apis/flowcontrol.apiserver.k8s.io/v1",
            "apis/coordination.k8s.io/v1",
            "apis/events.k8s.io/v1",
            "apis/resource.k8s.io/v1",
            "apis/resource.k8s.io/v1alpha3",
            "apis/resource.k8s.io/v1beta1",
            "apis/resource.k8s.io/v1beta2",
            "apis/scheduling.k8s.io/v1",
            "apis/scheduling.k8s.io/v1alpha2",  # this module serves every document; the server filters
            "apis/policy/v1",
            "apis/storage.k8s.io/v1",
            "apis/discovery.k8s.io/v1",
            "apis/networking.k8s.io/v1",
            "apis/node.k8s.io/v1",
            "apis/authorization.k8s.io/v1",
            "apis/authentication.k8s.io/v1",
            "apis/rbac.authorization.k8s.io/v1",
            "apis/apiregistration.k8s.io/v1",
            "apis/batch/v1",
            "apis/admissionregistration.k8s.io/v1",
        }
        url = paths["apis/resource.k8s.io/v1"]["serverRelativeURL"]
        assert url.startswith("/openapi/v3/apis/resource.k8s.io/v1?hash=")

        doc = await client.get(url, headers={"Accept": "application/json"})
        assert doc.status == 200
        data = await doc.read()
        assert url.endswith("hash=" + hashlib.sha512(data).hexdigest().upper())
        assert doc.headers["Cache-Control"] == "public, immutable"
        assert doc.headers["Expires"] == "Thu, 14 Nov 2024 22:13:20 GMT"
        assert doc.headers["Vary"] == "Accept"
        assert doc.headers["Etag"] == '"' + url.split("hash=")[1] + '"'
        parsed = json.loads(data)
        assert parsed["openapi"] == "3.0.0"
        assert "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}" in parsed["paths"]
    finally:
        await client.close()


async def test_stale_hash_redirects_and_no_hash_is_not_cacheable():
    client = await _client()
    try:
        index = await (await client.get("/openapi/v3")).json()
        current = index["paths"]["api/v1"]["serverRelativeURL"]
        resp = await client.get("/openapi/v3/api/v1?hash=DEADBEEF", allow_redirects=False)
        assert resp.status == 301
        assert resp.headers["Location"] == current
        plain = await client.get("/openapi/v3/api/v1")
        assert plain.status == 200
        assert "Cache-Control" not in plain.headers and "Expires" not in plain.headers
        assert plain.headers["Etag"] == '"' + current.split("hash=")[1] + '"'
        again = await client.get("/openapi/v3/api/v1", headers={"If-None-Match": plain.headers["Etag"]})
        assert again.status == 304
    finally:
        await client.close()


async def test_v2_is_an_empty_document_in_json_and_protobuf():
    client = await _client()
    try:
        resp = await client.get("/openapi/v2")
        assert resp.status == 200
        doc = await resp.json()
        assert doc["swagger"] == "2.0" and doc["paths"] == {} and doc["definitions"] == {}
        resp = await client.get(
            "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
        )
        assert resp.status == 200
        assert resp.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        body = await resp.read()
        assert body.startswith(b"\x0a\x032.0\x12")  # swagger = "2.0", then info
        resp = await client.get("/openapi/v2", headers={"Accept": "application/yaml"})
        assert resp.status == 406
    finally:
        await client.close()


async def test_unknown_group_version_is_404_status():
    client = await _client()
    try:
        for path in ("/openapi/v3/apis/autoscaling/v2beta2", "/openapi/v3/apis/resource.k8s.io/v9"):
            resp = await client.get(path)
            assert resp.status == 404, path
            body = await resp.json()
            assert body["kind"] == "Status" and body["reason"] == "NotFound" and body["code"] == 404
    finally:
        await client.close()


async def test_protobuf_only_accept_is_406():
    client = await _client()
    try:
        resp = await client.get(
            "/openapi/v3/api/v1", headers={"Accept": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"}
        )
        assert resp.status == 406
        assert (await resp.json())["reason"] == "NotAcceptable"
        ok = await client.get(
            "/openapi/v3/api/v1",
            headers={"Accept": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf, application/json;q=0.9"},
        )
        assert ok.status == 200
    finally:
        await client.close()
