"""Simulated drivers: their slices pass the real ResourceSlice strategy, pools carry
generations, health taints, and the fabric controller's binding conditions."""

import asyncio

import pytest

from mockkube.client.client import Client, clone
from mockkube.config.profile import NodeSpec, load
from mockkube.drivers import make
from mockkube.drivers.fpga import ATTACH_FAILED, ATTACHED, FabricController
from mockkube.drivers.publisher import Publisher
from mockkube.testing.cluster import running_server

NODE = NodeSpec(name="n1")


@pytest.mark.parametrize(
    "driver,config,devices",
    [
        ("gpu.example.com", {"count": 2}, 2),
        ("gpu.example.com", {"count": 8, "partitions": True}, 8 * 10),
        ("gpu.example.com", {"count": 2, "consumableMemory": True}, 2),
        ("cpu.example.com", {"shape": "cores", "sockets": 2, "coresPerSocket": 40}, 80),
        ("cpu.example.com", {"shape": "pool", "sockets": 2}, 2),
        ("cpu.example.com", {"shape": "partitions", "sockets": 2, "numaPerSocket": 2}, 12),
    ],
)
async def test_node_slices_are_accepted_by_the_api(driver, config, devices):
    async with running_server() as s:
        c = Client(s.resources, "test")
        pub = Publisher(c)
        assert pub.sync(driver, "n1", make(driver).publish(NODE, config)) == 1
        slices = c.list(c.rt("resourceslices", "resource.k8s.io"))
        assert sum(len(x["spec"].get("devices") or []) for x in slices) == devices
        counts = {x["spec"]["pool"]["resourceSliceCount"] for x in slices}
        assert counts == {len(slices)}
        assert all(x["spec"]["nodeName"] == "n1" and x["spec"]["pool"]["generation"] == 1 for x in slices)


async def test_cpu_devices_carry_node_allocatable_mappings():
    slices = make("cpu.example.com").publish(NODE, {"shape": "pool"})
    dev = slices[0]["devices"][0]
    assert dev["allowMultipleAllocations"] is True
    assert dev["nodeAllocatableResourceMappings"]["cpu"] == {"capacityKey": "cpu.example.com/cpu"}
    cores = make("cpu.example.com").publish(NODE, {"shape": "cores", "threadsPerCore": 2})
    assert cores[0]["devices"][0]["nodeAllocatableResourceMappings"] == {"cpu": {"allocationMultiplier": "2"}}


async def test_health_taint_bumps_generation_and_unchanged_does_not():
    async with running_server() as s:
        c = Client(s.resources, "test")
        pub = Publisher(c)
        gpu = make("gpu.example.com", {"healthTaintEffect": "NoExecute"})
        assert pub.sync(gpu.name, "n1", gpu.publish(NODE, {"count": 2})) == 1
        assert pub.sync(gpu.name, "n1", gpu.publish(NODE, {"count": 2})) == 1
        assert gpu.set_health("n1", "gpu-1", False)
        assert pub.sync(gpu.name, "n1", gpu.publish(NODE, {"count": 2})) == 2
        (sl,) = c.list(c.rt("resourceslices", "resource.k8s.io"))
        taints = {d["name"]: d.get("taints") for d in sl["spec"]["devices"]}
        assert taints["gpu-0"] is None
        assert taints["gpu-1"][0]["effect"] == "NoExecute"
        assert taints["gpu-1"][0]["key"] == "gpu.example.com/unhealthy"
        assert sl["spec"]["pool"]["generation"] == 2


async def test_fabric_slices_use_node_selector_and_binding_conditions():
    async with running_server() as s:
        c = Client(s.resources, "test")
        pub = Publisher(c)
        fpga = make("fpga.example.com")
        fabric = load(None).fabric + [
            {"driver": "fpga.example.com", "pool": "everywhere", "devices": 2, "allNodes": True}
        ]
        for pool, specs in fpga.publish_shared(fabric):
            pub.sync(fpga.name, pool, specs)
        by_pool = {x["spec"]["pool"]["name"]: x["spec"] for x in c.list(c.rt("resourceslices", "resource.k8s.io"))}
        assert by_pool["everywhere"]["allNodes"] is True
        expr = by_pool["fabric-a"]["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"][0]
        assert expr == {"key": "example.com/fabric", "operator": "In", "values": ["fabric-a"]}
        dev = by_pool["fabric-a"]["devices"][0]
        assert dev["bindsToNode"] is True and dev["bindingConditions"] == [ATTACHED]


def _allocated_claim(c: Client, name: str, results: list[dict], node: str = "") -> dict:
    rt = c.rt("resourceclaims", "resource.k8s.io")
    claim = c.create(
        rt,
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [{"name": r["request"], "exactly": {"deviceClassName": r["driver"]}} for r in results]
                }
            },
        },
    )
    new = clone(claim)
    alloc = {"devices": {"results": results}}
    if node:
        alloc["nodeSelector"] = {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
        }
    new["status"] = {"allocation": alloc}
    return c.update_status(rt, new)


async def _until(pred, n: int = 400):
    for _ in range(n):
        if pred():
            return True
        await asyncio.sleep(0.005)
    return False


@pytest.mark.parametrize("faulty,expected", [(set(), ATTACHED), ({"fpga-1"}, ATTACH_FAILED)])
async def test_fabric_controller_reports_after_delay(faulty, expected):
    now = [1000.0]
    async with running_server(clock=lambda: now[0]) as s:
        c = Client(s.resources, "test")
        fpga = make("fpga.example.com", {"attachDelay": "5s", "faultyDevices": sorted(faulty)})
        faults = []
        ctl = FabricController(c, lambda: now[0], fpga, on_fault=lambda p, d: faults.append((p, d)))
        await ctl.start()
        try:
            rt = c.rt("resourceclaims", "resource.k8s.io")
            _allocated_claim(
                c,
                "fc",
                [
                    {
                        "request": "fpga",
                        "driver": "fpga.example.com",
                        "pool": "fabric-a",
                        "device": "fpga-1",
                        "bindingConditions": [ATTACHED],
                        "bindingFailureConditions": [ATTACH_FAILED],
                    }
                ],
                node="fpga-node",
            )
            await _until(lambda: ctl.first_seen)
            assert not (c.get(rt, "default", "fc")["status"].get("devices"))  # not before the delay
            now[0] += 5
            ctl.queue.add(("default", "fc"))

            def conds():
                return [
                    x["type"]
                    for d in c.get(rt, "default", "fc")["status"].get("devices") or []
                    for x in d.get("conditions") or []
                ]

            assert await _until(lambda: conds())
            assert conds() == [expected]
            assert faults == ([("fabric-a", "fpga-1")] if faulty else [])
        finally:
            await ctl.stop()


async def test_fabric_failure_rate_is_seeded():
    """failureRate draws from an RNG seeded by the profile, so a run repeats exactly."""
    async with running_server() as s:
        c = Client(s.resources, "test")

        def outcomes(seed: int) -> list[bool]:
            fpga = make("fpga.example.com", {"failureRate": 0.5, "seed": seed})
            ctl = FabricController(c, lambda: 0.0, fpga)
            return [ctl._fails({"pool": "fabric-a", "device": f"fpga-{i}"}) for i in range(32)]

        first = outcomes(3)
        assert first == outcomes(3)
        assert any(first) and not all(first)
        assert first != outcomes(4)
