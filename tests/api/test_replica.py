"""The scheduler process's view of the cluster (mockkube/client/replica.py): list, then
watch over HTTP; informers see ADDED/MODIFIED/DELETED in order with the previous object;
a broken watch resumes, and one too far behind (410 Gone) relists, turning what vanished
meanwhile into DELETED. Also the remote client's writes and their errors."""

from __future__ import annotations

import asyncio

import pytest

from mockkube.client import kubeconfigs
from mockkube.client.remote import HTTP, RemoteClient
from mockkube.client.replica import Replica
from mockkube.machinery import errors

CM = "/api/v1/namespaces/default/configmaps"


async def until(cond, timeout: float = 10.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


def connect(server, tmp_path) -> tuple[HTTP, object]:
    path = tmp_path / "kubeconfig"
    server.write_kubeconfig(path)
    http = HTTP(kubeconfigs.load(path), "replica-test")
    return http, server.registry.get("", "v1", "configmaps")


async def test_informer_events_follow_the_api_in_order(api, tmp_path):
    await api.post(CM, {"metadata": {"name": "before"}, "data": {"a": "1"}})
    http, rt = connect(api.server, tmp_path)
    replica = Replica(http, [rt])
    seen: list[tuple[str, str, str | None]] = []
    replica.hub.add_listener(
        rt.storage_key,
        lambda ev: seen.append((ev.type, ev.entry.obj["metadata"]["name"], (ev.prev or {}).get("data", {}).get("a"))),
    )
    await replica.start()
    try:
        assert replica.get(rt, "default", "before").obj["data"] == {"a": "1"}
        assert seen == [("ADDED", "before", None)]
        await api.post(CM, {"metadata": {"name": "new"}, "data": {"a": "x"}})
        await api.patch(f"{CM}/new", {"data": {"a": "y"}})
        await api.delete(f"{CM}/before")
        await until(lambda: len(seen) == 4)
        assert seen[1:] == [("ADDED", "new", None), ("MODIFIED", "new", "x"), ("DELETED", "before", "1")]
        assert [o["metadata"]["name"] for o in replica.objects(rt)] == ["new"]
        assert replica.position(rt.storage_key) >= int(
            replica.get(rt, "default", "new").obj["metadata"]["resourceVersion"]
        )
    finally:
        await replica.stop()
        await http.close()


async def test_a_watch_too_far_behind_relists(api, tmp_path):
    """The api fixture keeps 50 events per resource: 60 changes while the watch is down
    make its resourceVersion too old (410), so the reflector lists again."""
    for name in ("keep", "gone"):
        await api.post(CM, {"metadata": {"name": name}})
    http, rt = connect(api.server, tmp_path)
    replica = Replica(http, [rt])
    deleted: list[str] = []
    replica.hub.add_listener(
        rt.storage_key, lambda ev: ev.type == "DELETED" and deleted.append(ev.entry.obj["metadata"]["name"])
    )
    await replica.start()
    try:
        await http.session().close()  # the watch breaks; the reflector resumes from its last rv
        res = api.server.resources
        for i in range(60):
            res.create(rt, "default", {"metadata": {"name": f"cm-{i}"}})
        res.delete(rt, "default", "gone")
        await until(lambda: replica.get(rt, "default", "cm-59") is not None and not replica.get(rt, "default", "gone"))
        assert deleted == ["gone"]
        assert len(replica.objects(rt)) == 61
    finally:
        await replica.stop()
        await http.close()


async def test_remote_writes_and_errors(api, tmp_path):
    http, rt = connect(api.server, tmp_path)
    replica = Replica(http, [rt])
    await replica.start()
    client = RemoteClient(http, replica, api.server.registry, "remote-test")
    try:
        created = await asyncio.to_thread(
            client.create, rt, {"metadata": {"name": "w", "namespace": "default"}, "data": {"k": "v"}}
        )
        assert created["metadata"]["managedFields"][0]["manager"] == "remote-test"
        with pytest.raises(errors.APIError) as e:
            await asyncio.to_thread(client.create, rt, {"metadata": {"name": "w", "namespace": "default"}})
        assert e.value.code == 409 and e.value.reason == "AlreadyExists"
        stale = dict(created, data={"a": "b"})
        await asyncio.to_thread(client.update, rt, dict(created, data={"a": "first"}))
        with pytest.raises(errors.APIError) as e:
            await asyncio.to_thread(client.update, rt, stale)
        assert e.value.code == 409 and e.value.reason == "Conflict"
        assert await asyncio.to_thread(client.delete, rt, "default", "w") is None
        assert await asyncio.to_thread(client.delete, rt, "default", "w") is None  # 404 is "gone"
    finally:
        await replica.stop()
        await http.close()


async def test_the_replica_drops_managed_fields_and_a_write_from_it_keeps_them(api, tmp_path):
    """As kube-scheduler's pod informer: cached objects without managedFields (memory); a
    write of such an object omits them, and the server keeps the stored ones."""
    await api.post(CM, {"metadata": {"name": "mf"}, "data": {"a": "1"}})
    http, rt = connect(api.server, tmp_path)
    replica = Replica(http, [rt])
    await replica.start()
    client = RemoteClient(http, replica, api.server.registry, "replica-writer")
    try:
        cached = replica.get(rt, "default", "mf").obj
        assert "managedFields" not in cached["metadata"]
        await asyncio.to_thread(client.update, rt, dict(cached, data={"a": "2"}))
        _, stored, _ = await api.get(f"{CM}/mf")
        assert stored["data"] == {"a": "2"}
        managers = [e["manager"] for e in stored["metadata"]["managedFields"]]
        assert len(managers) == 2 and "replica-writer" in managers
    finally:
        await replica.stop()
        await http.close()


async def test_a_strict_replica_refuses_reads_of_what_it_does_not_follow(api, tmp_path):
    """A kubelet shard follows only what its components read: a read of anything else must
    fail loudly (NotFollowed), not look like an empty cluster. A lax replica answers empty
    (an informer over every type meets resources it cannot watch)."""
    from mockkube.client.replica import NotFollowed

    http, rt = connect(api.server, tmp_path)
    secrets = api.server.registry.get("", "v1", "secrets")
    strict, lax = Replica(http, [rt], strict=True), Replica(http, [rt])
    try:
        assert strict.get(rt, "default", "none") is None  # followed: absent is absent
        with pytest.raises(NotFollowed, match="secrets is not followed"):
            strict.get(secrets, "default", "s")
        with pytest.raises(NotFollowed):
            strict.objects(secrets)
        with pytest.raises(NotFollowed):
            strict.cache(secrets)
        assert lax.get(secrets, "default", "s") is None and lax.objects(secrets) == []
    finally:
        await http.close()
