"""Events expire after ``--event-ttl`` without a write (kube-apiserver's etcd lease): over
HTTP, a core/v1 Event and an events.k8s.io/v1 Event are deleted once the cluster clock
passes the TTL since their last write, an update renews it, and a watcher sees DELETED."""

from __future__ import annotations

import json

import aiohttp
from _lifecycle import eventually, settle

from mockkube.controllers import eventttl
from mockkube.testing.cluster import running_server

NOW = 1_900_000_000.0
CORE = "/api/v1/namespaces/default/events"
NEW = "/apis/events.k8s.io/v1/namespaces/default/events"


def core_event(name: str) -> dict:
    return {
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "reason": "Test",
        "message": "m",
        "type": "Normal",
    }


async def test_events_expire_an_hour_after_their_last_write():
    clock = [NOW]
    async with running_server(clock=lambda: clock[0]) as server:
        [ttl] = await eventttl.start(server)
        assert ttl.ttl == 3600  # kube-apiserver's default
        try:
            async with aiohttp.ClientSession(server.url) as http:

                async def status(path: str) -> int:
                    async with http.get(path) as r:
                        return r.status

                async def advance(seconds: float) -> None:
                    clock[0] += seconds
                    ttl.resync()
                    await settle()

                for name in ("a", "b"):
                    async with http.post(CORE, json=core_event(name)) as r:
                        assert r.status == 201
                async with http.post(
                    NEW,
                    json={
                        "metadata": {"name": "c"},
                        "eventTime": "2026-01-01T00:00:00.000000Z",
                        "reportingController": "x",
                        "reportingInstance": "x",
                        "action": "A",
                        "reason": "R",
                        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
                        "type": "Normal",
                    },
                ) as r:
                    assert r.status == 201
                async with http.get(CORE, params={"watch": "true", "resourceVersion": "0"}) as watch:
                    await advance(1800)
                    async with http.patch(
                        f"{CORE}/b", json={"count": 2}, headers={"Content-Type": "application/merge-patch+json"}
                    ) as r:
                        assert r.status == 200  # renews b's lease
                    await advance(1799)
                    assert [await status(p) for p in (f"{CORE}/a", f"{CORE}/b", f"{NEW}/c")] == [200, 200, 200]
                    await advance(2)
                    await eventually(lambda: "a" not in {lease[2] for lease in ttl.leases})
                    assert [await status(p) for p in (f"{CORE}/a", f"{CORE}/b", f"{NEW}/c")] == [404, 200, 404]
                    await advance(1800)
                    await eventually(lambda: not ttl.leases)
                    assert await status(f"{CORE}/b") == 404
                    seen = []
                    while len([t for t in seen if t == "DELETED"]) < 2:  # a and b (c is not a core Event)
                        line = await watch.content.readline()
                        seen.append(json.loads(line)["type"])
        finally:
            await ttl.stop()


async def test_a_burst_of_leases_runs_out_in_slices_oldest_first():
    """One lease entry per write, in write order; the clock moved past them all deletes every
    Event, a slice of the loop at a time, and nothing is left held for them."""
    clock = [NOW]
    async with running_server(clock=lambda: clock[0]) as server:
        [ttl] = await eventttl.start(server)
        try:
            async with aiohttp.ClientSession(server.url) as http:
                for i in range(300):
                    async with http.post(CORE, json=core_event(f"e{i}")) as r:
                        assert r.status == 201
                    clock[0] += 1
                await settle()
                assert [lease[2] for lease in ttl.leases] == [f"e{i}" for i in range(300)]
                clock[0] = NOW + 3600 + 149  # the first 150 ran out (written at NOW .. NOW+149)
                ttl.resync()
                await eventually(lambda: len(ttl.leases) == 150)
                async with http.get(CORE) as r:
                    names = {e["metadata"]["name"] for e in (await r.json())["items"]}
                assert names == {f"e{i}" for i in range(150, 300)}
                clock[0] += 3600
                ttl.resync()
                await eventually(lambda: not ttl.leases)
                async with http.get(CORE) as r:
                    assert (await r.json())["items"] == []
        finally:
            await ttl.stop()


async def test_an_event_ttl_of_zero_keeps_events():
    async with running_server(event_ttl=0) as server:
        assert await eventttl.start(server) == []
