"""ResourcePoolStatusRequest (resource.k8s.io/v1alpha3, KEP-5677, DRAResourcePoolStatus):
validation and defaults over HTTP, the controller filling the status once from slices and
claims (newest generation, incomplete pools, the limit), the immutable result, the TTL
cleanup on the cluster clock, and the controller staying off without the gate."""

from __future__ import annotations

import asyncio

import pytest
from _lifecycle import eventually, settle

from mockkube.client.client import Client, clone
from mockkube.controllers import resourcepoolstatus
from mockkube.controllers.resourcepoolstatus_util import pool_status
from mockkube.testing.cluster import running_server

NOW = 1_800_000_000.0
DRIVER = "gpu.example.com"
G = "resource.k8s.io"


@pytest.fixture
async def env():
    clock = [NOW]
    async with running_server(
        components=False,
        clock=lambda: clock[0],
        feature_gates={"DRAResourcePoolStatus": True},
        runtime_config={"resource.k8s.io/v1alpha3": True},
    ) as server:
        [ctrl] = await resourcepoolstatus.start(server)
        try:
            yield server, Client(server.resources, manager="test"), ctrl, clock
        finally:
            await ctrl.stop()


def _slice(name: str, pool: str, devices: int, gen: int = 1, count: int = 1, node: str | None = None) -> dict:
    spec: dict = {
        "driver": DRIVER,
        "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
        "devices": [{"name": f"{name}-d{i}"} for i in range(devices)],
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return {"metadata": {"name": name}, "spec": spec}


def _request(name: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"driver": DRIVER, **spec}}


def _claim(name: str, pool: str, devices: list[str]) -> dict:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "r", "driver": DRIVER, "pool": pool, "device": d} for d in devices]}
            }
        },
    }


def test_pool_status_counts_the_newest_generation():
    slices = [
        _slice("a1", "node-a", 4, node="node-a"),
        _slice("b-old", "node-b", 9, gen=1, node="node-b"),
        _slice("b-new", "node-b", 2, gen=2, node="node-b"),
        _slice("c1", "shared", 3, count=2),  # one of two slices: incomplete
        {"metadata": {"name": "x"}, "spec": {**_slice("x", "other", 1)["spec"], "driver": "other.example.com"}},
    ]
    claims = [_claim("c", "node-a", ["a1-d0", "a1-d1"])]
    st = pool_status(_request("r"), slices, claims, "2026-01-01T00:00:00Z")
    assert st["poolCount"] == 3
    assert st["pools"] == [
        {
            "driver": DRIVER,
            "poolName": "node-a",
            "generation": 1,
            "nodeName": "node-a",
            "resourceSliceCount": 1,
            "totalDevices": 4,
            "allocatedDevices": 2,
            "availableDevices": 2,
            "unavailableDevices": 0,
        },
        {
            "driver": DRIVER,
            "poolName": "node-b",
            "generation": 2,
            "nodeName": "node-b",
            "resourceSliceCount": 1,
            "totalDevices": 2,
            "allocatedDevices": 0,
            "availableDevices": 2,
            "unavailableDevices": 0,
        },
        {
            "driver": DRIVER,
            "poolName": "shared",
            "generation": 1,
            "validationError": f"pool {DRIVER}/shared is incomplete: observed 1/2 slices at generation 1",
        },
    ]
    assert st["conditions"][0]["message"] == "Calculated status for 3 pools (1 incomplete)"
    # the limit truncates, poolCount still counts every match; poolName filters
    st = pool_status(_request("r", limit=1), slices, claims, "t")
    assert [p["poolName"] for p in st["pools"]] == ["node-a"] and st["poolCount"] == 3
    st = pool_status(_request("r", poolName="node-b"), slices, claims, "t")
    assert [p["poolName"] for p in st["pools"]] == ["node-b"]
    st = pool_status(_request("r", poolName="none"), slices, claims, "t")
    assert "pools" not in st and st["poolCount"] == 0


async def test_validation_and_defaults(env):
    server, c, _ctrl, _clock = env
    rt = c.rt("resourcepoolstatusrequests", G)
    from mockkube.machinery import errors

    with pytest.raises(errors.APIError) as e:
        c.create(rt, {"metadata": {"name": "bad"}, "spec": {"driver": "Not_A_Name", "limit": 0, "poolName": ""}})
    fields = sorted(cause["field"] for cause in e.value.status()["details"]["causes"])
    assert fields == ["spec.driver", "spec.limit", "spec.poolName"]
    with pytest.raises(errors.APIError) as e:
        c.create(rt, {"metadata": {"name": "big"}, "spec": {"driver": DRIVER, "limit": 1001}})
    assert "must be less than or equal to 1000" in e.value.status()["message"]
    created = c.create(rt, _request("ok", status={"poolCount": 9}) | {"status": {"poolCount": 9}})
    assert created["spec"]["limit"] == 100
    assert "generation" not in created["metadata"]


async def test_the_controller_fills_the_status_once(env):
    server, c, ctrl, _clock = env
    c.create(c.rt("resourceslices", G), _slice("s1", "node-a", 3, node="node-a"))
    rt = c.rt("resourcepoolstatusrequests", G)
    c.create(rt, _request("req"))
    done = await eventually(lambda: (c.get(rt, "", "req") or {}).get("status"))
    assert done["poolCount"] == 1 and done["pools"][0]["totalDevices"] == 3
    assert done["conditions"][0]["type"] == "Complete"
    assert done["conditions"][0]["lastTransitionTime"] == "2027-01-15T08:00:00Z"
    # complete: the status never changes again, nor the spec
    from mockkube.machinery import errors

    obj = clone(c.get(rt, "", "req"))
    obj["status"]["poolCount"] = 7
    with pytest.raises(errors.APIError) as e:
        c.update_status(rt, obj)
    assert e.value.code == 422 and "status: Invalid value" in e.value.status()["message"]
    obj = clone(c.get(rt, "", "req"))
    obj["spec"]["limit"] = 5
    with pytest.raises(errors.APIError) as e:
        c.update(rt, obj)
    assert "field is immutable" in e.value.status()["message"]


async def test_incomplete_pools_keep_the_request_pending(env):
    server, c, ctrl, _clock = env
    c.create(c.rt("resourceslices", G), _slice("s1", "shared", 3, count=2))
    rt = c.rt("resourcepoolstatusrequests", G)
    c.create(rt, _request("wait"))
    await eventually(lambda: ctrl.retries.get("wait") == 5)  # upstream's maxRetries, then dropped
    await eventually(lambda: "wait" not in ctrl.retries)
    assert c.get(rt, "", "wait").get("status") is None
    # the second slice arrives; a change of the request (as upstream: its update event) retries
    c.create(c.rt("resourceslices", G), _slice("s2", "shared", 1, count=2))
    obj = clone(c.get(rt, "", "wait"))
    obj["metadata"]["labels"] = {"poke": "1"}
    c.update(rt, obj)
    done = await eventually(lambda: (c.get(rt, "", "wait") or {}).get("status"))
    assert done["pools"][0]["totalDevices"] == 4


async def test_ttl_cleanup(env):
    server, c, ctrl, clock = env
    rt = c.rt("resourcepoolstatusrequests", G)
    c.create(rt, _request("old"))
    await eventually(lambda: (c.get(rt, "", "old") or {}).get("status"))
    clock[0] += 3599
    ctrl.resync()
    await settle()
    assert c.get(rt, "", "old") is not None
    clock[0] += 2
    ctrl.resync()
    await eventually(lambda: c.get(rt, "", "old") is None)


async def test_no_controller_without_the_gate():
    async with running_server(components=False) as server:
        assert await resourcepoolstatus.start(server) == []


async def test_over_http(env):
    import aiohttp

    server, c, _ctrl, _clock = env
    c.create(c.rt("resourceslices", G), _slice("s1", "node-a", 2, node="node-a"))
    url = f"{server.url}/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests"
    async with aiohttp.ClientSession() as s:
        async with s.post(url, json={"apiVersion": "resource.k8s.io/v1alpha3", **_request("http")}) as r:
            assert r.status == 201, await r.text()
            assert (await r.json())["spec"] == {"driver": DRIVER, "limit": 100}

        async def status():
            async with s.get(f"{url}/http/status") as r:
                return (await r.json()).get("status")

        deadline = asyncio.get_running_loop().time() + 10
        st = await status()
        while not st and asyncio.get_running_loop().time() < deadline:  # poll with a deadline
            await asyncio.sleep(0.02)
            st = await status()
        assert st["pools"][0]["poolName"] == "node-a" and st["pools"][0]["availableDevices"] == 2
        async with s.get(f"{server.url}/apis/resource.k8s.io/v1alpha3") as r:
            names = sorted(x["name"] for x in (await r.json())["resources"])
        assert names == ["resourcepoolstatusrequests", "resourcepoolstatusrequests/status"]


async def test_the_controller_writes_as_its_service_account_under_rbac():
    """With Node,RBAC enforced, the controller's status write and TTL delete are allowed by
    its role (kube-system:resourcepoolstatusrequest-controller)."""
    clock = [NOW]
    async with running_server(
        components=False,
        clock=lambda: clock[0],
        authorization_mode="Node,RBAC",
        feature_gates={"DRAResourcePoolStatus": True},
        runtime_config={"resource.k8s.io/v1alpha3": True},
    ) as server:
        [ctrl] = await resourcepoolstatus.start(server)
        try:
            c = Client(server.resources, manager="test")
            rt = c.rt("resourcepoolstatusrequests", G)
            c.create(rt, _request("rbac"))
            await eventually(lambda: (c.get(rt, "", "rbac") or {}).get("status"))
            clock[0] += 3601
            ctrl.resync()
            await eventually(lambda: c.get(rt, "", "rbac") is None)
        finally:
            await ctrl.stop()
