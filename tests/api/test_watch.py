"""Watch over HTTP: framing, resume, 410, watch-list bookmarks, selectors, tables."""

from __future__ import annotations

import asyncio
import json

CM = "/api/v1/namespaces/default/configmaps"


def cm(name: str, labels: dict | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": {"a": "1"}}


async def events(api, params: dict, n: int, headers: dict | None = None, timeout: float = 5.0) -> list[dict]:
    """Read ``n`` events (one JSON document per line) from a watch."""
    out = []
    async with api.s.get(api.url + CM, params={"watch": "true", **params}, headers=headers or {}) as r:
        assert r.status == 200, await r.text()
        assert r.headers["Content-Type"] == "application/json"

        async def read():
            while len(out) < n:
                line = await r.content.readline()
                if not line:
                    break
                out.append(json.loads(line))

        await asyncio.wait_for(read(), timeout)
    return out


async def test_watch_from_rv_sees_later_changes(api):
    _, c, _ = await api.post(CM, cm("w1"))
    rv = c["metadata"]["resourceVersion"]
    await api.patch(f"{CM}/w1", {"data": {"b": "2"}})
    await api.delete(f"{CM}/w1")
    evs = await events(api, {"resourceVersion": rv}, 2)
    assert [e["type"] for e in evs] == ["MODIFIED", "DELETED"]
    assert evs[0]["object"]["kind"] == "ConfigMap" and evs[0]["object"]["data"] == {"a": "1", "b": "2"}
    assert int(evs[1]["object"]["metadata"]["resourceVersion"]) > int(evs[0]["object"]["metadata"]["resourceVersion"])


async def test_watch_without_rv_replays_state_then_follows(api):
    await api.post(CM, cm("s1"))

    async def later():
        await asyncio.sleep(0.05)
        await api.post(CM, cm("s2"))

    task = asyncio.ensure_future(later())
    evs = await events(api, {}, 2)
    await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("ADDED", "s1"), ("ADDED", "s2")]


async def test_too_old_resource_version_is_410(api):
    _, first, _ = await api.post(CM, cm("old"))
    rv = first["metadata"]["resourceVersion"]
    for i in range(60):  # the test server keeps 50 events per resource
        await api.patch(f"{CM}/old", {"data": {"n": str(i)}})
    st, body, _ = await api.get(CM, params={"watch": "true", "resourceVersion": rv})
    assert st == 410 and body["reason"] == "Expired" and body["kind"] == "Status"
    assert body["message"].startswith(f"too old resource version: {rv} (")


async def test_too_large_resource_version_is_504(api):
    st, body, _ = await api.get(CM, params={"watch": "true", "resourceVersion": "999999"})
    assert st == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


async def test_watch_list_initial_events_end_bookmark(api):
    await api.post(CM, cm("wl1"))
    await api.post(CM, cm("wl2"))
    evs = await events(
        api,
        {
            "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "5",
        },
        3,
    )
    assert [e["type"] for e in evs] == ["ADDED", "ADDED", "BOOKMARK"]
    bm = evs[2]["object"]
    assert bm["kind"] == "ConfigMap" and bm["apiVersion"] == "v1"
    assert bm["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bm["metadata"]["resourceVersion"]) >= int(evs[1]["object"]["metadata"]["resourceVersion"])


async def test_watch_list_parameter_validation(api):
    st, body, _ = await api.get(CM, params={"watch": "true", "sendInitialEvents": "true"})
    assert st == 422 and body["details"]["kind"] == "ListOptions"
    st, body, _ = await api.get(CM, params={"sendInitialEvents": "true"})
    assert st == 422


async def test_timeout_seconds_ends_the_stream(api):
    async with api.s.get(
        api.url + CM, params={"watch": "true", "timeoutSeconds": "1", "resourceVersion": str(api.server.store.rv)}
    ) as r:
        body = await asyncio.wait_for(r.read(), 5)
    assert body == b""


async def test_selector_transitions_are_added_and_deleted(api):
    _, c, _ = await api.post(CM, cm("sel", {"app": "x"}))
    rv = c["metadata"]["resourceVersion"]
    await api.patch(f"{CM}/sel", {"metadata": {"labels": {"app": "y"}}})
    await api.patch(f"{CM}/sel", {"metadata": {"labels": {"app": "x"}}})
    evs = await events(api, {"resourceVersion": rv, "labelSelector": "app=x"}, 2)
    assert [e["type"] for e in evs] == ["DELETED", "ADDED"]


async def test_table_watch_headers_only_first(api):
    await api.post(CM, cm("t1"))
    await api.post(CM, cm("t2"))
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    evs = await events(api, {}, 2, headers={"Accept": accept})
    assert evs[0]["object"]["kind"] == "Table" and evs[0]["object"]["columnDefinitions"]
    assert not evs[1]["object"].get("columnDefinitions")
    assert evs[1]["object"]["rows"][0]["cells"][0] == "t2"


async def test_bookmarks_when_allowed(api, monkeypatch):
    from mockkube.apiserver.http import watchstream

    monkeypatch.setattr(watchstream, "BOOKMARK_INTERVAL", 0.05)
    rv = str(api.server.store.rv)
    evs = await events(api, {"resourceVersion": rv, "allowWatchBookmarks": "true"}, 1)
    assert evs[0]["type"] == "BOOKMARK" and evs[0]["object"]["metadata"]["resourceVersion"] == rv


async def test_watch_ends_cleanly_on_shutdown(api):
    rv = str(api.server.store.rv)
    async with api.s.get(api.url + CM, params={"watch": "true", "resourceVersion": rv}) as r:
        api.server.app[__import__("mockkube.apiserver.http.app", fromlist=["STOPPING"]).STOPPING].set()
        body = await asyncio.wait_for(r.read(), 5)
    assert body == b""
