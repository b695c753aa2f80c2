"""API faults over HTTP: injected Status codes (Retry-After on 429), latency, a dropped
watch, 410 on a resumed watch; listing, removing and clearing; reset clears them."""

from __future__ import annotations

import time

import aiohttp

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}


async def test_error_faults_answer_kubernetes_statuses(api):
    status, f, _ = await api.post(
        "/mockkube/v1/faults",
        {"kind": "error", "code": 429, "verbs": ["create"], "resources": ["configmaps"], "count": 1},
    )
    assert status == 201 and f["id"].startswith("fault-") and f["retryAfterSeconds"] == 1
    status, body, headers = await api.post("/api/v1/namespaces/default/configmaps", CM)
    assert status == 429 and body["reason"] == "TooManyRequests" and headers["Retry-After"] == "1"
    assert body["details"]["retryAfterSeconds"] == 1
    assert (await api.post("/api/v1/namespaces/default/configmaps", CM))[0] == 201  # count 1: used up
    for code, reason in ((409, "Conflict"), (500, "InternalError"), (503, "ServiceUnavailable"), (504, "Timeout")):
        _, f, _ = await api.post("/mockkube/v1/faults", {"kind": "error", "code": code, "namespaces": ["default"]})
        status, body, _ = await api.get("/api/v1/namespaces/default/configmaps/c")
        assert (status, body["kind"], body["reason"]) == (code, "Status", reason)
        assert (await api.get("/api/v1/namespaces/kube-system/configmaps"))[0] == 200  # other namespace
        assert (await api.delete(f"/mockkube/v1/faults/{f['id']}"))[0] == 200
    status, body, _ = await api.get("/api/v1/namespaces/default/configmaps/c")
    assert status == 200


async def test_users_scope_and_listing_and_clear(api):
    await api.post("/mockkube/v1/faults", {"kind": "error", "code": 503, "users": ["alice"]})
    assert (await api.get("/api/v1/namespaces", headers={"Impersonate-User": "alice"}))[0] == 503
    assert (await api.get("/api/v1/namespaces", headers={"Impersonate-User": "bob"}))[0] == 200
    assert (await api.get("/api/v1/namespaces"))[0] == 200
    status, listed, _ = await api.get("/mockkube/v1/faults")
    assert status == 200 and [f["users"] for f in listed["items"]] == [["alice"]] and listed["items"][0]["fired"] == 1
    status, body, _ = await api.delete("/mockkube/v1/faults")
    assert status == 200 and body["details"]["removed"] == 1
    assert (await api.get("/mockkube/v1/faults"))[1]["items"] == []
    status, body, _ = await api.post("/mockkube/v1/faults", {"kind": "error", "code": 418})
    assert status == 422 and body["reason"] == "Invalid" and "code" in body["message"]
    assert (await api.delete("/mockkube/v1/faults/fault-999"))[0] == 404


async def test_latency_is_added(api):
    await api.post(
        "/mockkube/v1/faults", {"kind": "latency", "delaySeconds": 0.3, "verbs": ["list"], "resources": ["secrets"]}
    )
    t0 = time.perf_counter()
    assert (await api.get("/api/v1/namespaces/default/secrets"))[0] == 200
    assert time.perf_counter() - t0 >= 0.3
    t0 = time.perf_counter()
    assert (await api.get("/api/v1/namespaces/default/configmaps"))[0] == 200
    assert time.perf_counter() - t0 < 0.3


async def test_dropped_watch_and_gone_on_resume(api):
    status, body, _ = await api.post("/api/v1/namespaces/default/configmaps", CM)
    rv = body["metadata"]["resourceVersion"]
    await api.post("/mockkube/v1/faults", {"kind": "drop-watch", "afterSeconds": 0, "resources": ["configmaps"]})
    t0 = time.perf_counter()
    async with api.s.get(
        api.url + "/api/v1/namespaces/default/configmaps",
        params={"watch": "true", "resourceVersion": "0", "timeoutSeconds": "60"},
    ) as r:
        got = b""
        try:
            async for chunk in r.content.iter_any():
                got += chunk
        except aiohttp.ClientPayloadError:
            pass  # cut mid-stream, as a dropped connection is
    assert time.perf_counter() - t0 < 10  # not the 60 s the watch asked for
    await api.delete("/mockkube/v1/faults")
    await api.post("/mockkube/v1/faults", {"kind": "gone", "resources": ["configmaps"]})
    status, body, _ = await api.get(
        "/api/v1/namespaces/default/configmaps", params={"watch": "true", "resourceVersion": rv}
    )
    assert (
        status == 410
        and body["reason"] == "Expired"
        and body["message"].startswith(f"too old resource version: {rv} (")
    )
    # a list (the relist a client then does) is not affected
    assert (await api.get("/api/v1/namespaces/default/configmaps"))[0] == 200


async def test_reset_clears_faults(api):
    await api.post("/mockkube/v1/faults", {"kind": "error", "code": 500, "resources": ["pods"]})
    assert len(api.server.faults) == 1
    await api.post("/mockkube/v1/reset", {})
    assert len(api.server.faults) == 0
