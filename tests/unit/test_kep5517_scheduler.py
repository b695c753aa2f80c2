"""KEP-5517 through the real scheduler (informers, DynamicResources, the node ledger,
PreBind): the KEP's resource representations, its use cases with the totals the KEP
states, Filter reasons, release on delete, fungible claims, sharing and pod-level
resources (messages as upstream v1.36's nodeallocatabledynamicresources.go)."""

from __future__ import annotations

import pytest

from mockkube.machinery.podrequests import amount
from tests.unit._sched_helpers import G, env

DRA = "dra.example.com"
XPU = "xpu.example.com"
GI = 1024**3
MI = 1024**2


# -- builders -------------------------------------------------------------------------


def cls(e, name: str, driver: str, expr: str = "") -> None:
    sel = f'device.driver == "{driver}"' + (f" && {expr}" if expr else "")
    e.c.create(
        e.rt("deviceclasses", G), {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": sel}}]}}
    )


def rslice(e, node: str, driver: str, devices: list[dict] | None = None, name: str = "", **spec) -> None:
    body = {
        "driver": driver,
        "nodeName": node,
        "pool": {"name": f"{node}-{driver}", "generation": 1, "resourceSliceCount": spec.pop("count", 1)},
        **spec,
    }
    if devices is not None:
        body["devices"] = devices
    e.c.create(e.rt("resourceslices", G), {"metadata": {"name": name or f"{node}-{driver}"}, "spec": body})


def claim(e, name: str, *requests: dict) -> None:
    e.c.create(
        e.rt("resourceclaims", G),
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {"requests": list(requests)}}},
    )


def exactly(name: str, dclass: str, count: int | None = None, capacity: dict | None = None) -> dict:
    ex: dict = {"deviceClassName": dclass}
    if count is not None:
        ex["count"] = count
    if capacity:
        ex["capacity"] = {"requests": capacity}
    return {"name": name, "exactly": ex}


def container(name: str, requests: dict | None = None, claims: tuple[str, ...] = ()) -> dict:
    c: dict = {"name": name, "image": "busybox"}
    res: dict = {}
    if requests:
        res["requests"] = requests
    if claims:
        res["claims"] = [{"name": n} for n in claims]
    if res:
        c["resources"] = res
    return c


def pod(
    e,
    name: str,
    containers: list[dict],
    claims: dict[str, str] | None = None,
    templates: dict[str, str] | None = None,
    **spec,
) -> None:
    rcs = [{"name": k, "resourceClaimName": v} for k, v in (claims or {}).items()]
    rcs += [{"name": k, "resourceClaimTemplateName": v} for k, v in (templates or {}).items()]
    body: dict = {"containers": containers, **spec}
    if rcs:
        body["resourceClaims"] = rcs
    e.c.create(e.rt("pods"), {"metadata": {"name": name, "namespace": "default"}, "spec": body})


def requested(e, node: str) -> dict[str, int]:
    info = e.sched.cache.nodes[node]
    return {k: v for k, v in info.requested.items() if v}


def statuses(e, name: str) -> list[dict] | None:
    return (e.get_pod(name).get("status") or {}).get("nodeAllocatableResourceClaimStatuses")


def socket(name: str = "socket0", cpu: str = "128", memory: str | None = "256Gi", driver: str = DRA) -> dict:
    cap = {f"{driver}/cpu": {"value": cpu}}
    maps = {"cpu": {"capacityKey": f"{driver}/cpu"}}
    if memory:
        cap[f"{driver}/memory"] = {"value": memory}
        maps["memory"] = {"capacityKey": f"{driver}/memory"}
    return {
        "name": name,
        "attributes": {f"{driver}/type": {"string": "socket"}},
        "allowMultipleAllocations": True,
        "capacity": cap,
        "nodeAllocatableResourceMappings": maps,
    }


def cores(n: int, per_core: str = "1") -> list[dict]:
    return [
        {
            "name": f"cpu{i}",
            "attributes": {"numaNode": {"int": 0}},
            "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": per_core}},
        }
        for i in range(n)
    ]


def xpu(name: str, cpu: str, memory: str) -> dict:
    return {
        "name": name,
        "attributes": {"example.com/model": {"string": "model-x"}},
        "nodeAllocatableResourceMappings": {
            "cpu": {"allocationMultiplier": cpu},
            "memory": {"allocationMultiplier": memory},
        },
    }


def partitions() -> tuple[list[dict], list[dict]]:
    """The KEP's partitionable CPU: a 128-cpu counter set, NUMA nodes of 32, L3 caches of 8."""
    key = f"{DRA}/cpu"

    def part(name: str, typ: str, cpus: int) -> dict:
        return {
            "name": name,
            "attributes": {f"{DRA}/type": {"string": typ}},
            "capacity": {key: {"value": str(cpus)}},
            "consumesCounters": [{"counterSet": "node-cpu-counters", "counters": {"cpu": {"value": str(cpus)}}}],
            "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": key}},
        }

    devices = [part("socket-0-numa-0", "numa", 32)] + [part(f"socket-0-l3-{i}", "l3cache", 8) for i in range(4)]
    # counter names are DNS labels (the KEP's "dra.example.com/cpu" counter would not validate)
    counters = [{"name": "node-cpu-counters", "counters": {"cpu": {"value": "128"}}}]
    return devices, counters


# -- the four representations --------------------------------------------------------------


def _individual(e):
    rslice(e, "n1", DRA, cores(8, per_core="2"))
    cls(e, "cpu-core", DRA)
    claim(e, "c", exactly("r", "cpu-core", count=3))
    return {"cpu": "6"}


def _pool(e):
    rslice(e, "n1", DRA, [socket()])
    cls(e, "cpu-mem", DRA)
    claim(e, "c", exactly("r", "cpu-mem", capacity={f"{DRA}/cpu": "8", f"{DRA}/memory": "16Gi"}))
    return {"cpu": "8", "memory": "16Gi"}


def _pool_multiplier(e):
    # capacityKey times allocationMultiplier: 8 cores consumed, 2 cpus each
    dev = {
        "name": "socket0",
        "allowMultipleAllocations": True,
        "capacity": {f"{DRA}/cores": {"value": "64"}},
        "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": f"{DRA}/cores", "allocationMultiplier": "2"}},
    }
    rslice(e, "n1", DRA, [dev])
    cls(e, "cores", DRA)
    claim(e, "c", exactly("r", "cores", capacity={f"{DRA}/cores": "8"}))
    return {"cpu": "16"}


def _partitions_l3(e):
    devices, counters = partitions()
    rslice(e, "n1", DRA, devices, name="cpus", count=2)
    rslice(e, "n1", DRA, None, name="counters", sharedCounters=counters, count=2)
    cls(e, "l3", DRA, f'device.attributes["{DRA}"].type == "l3cache"')
    claim(e, "c", exactly("r", "l3"))
    return {"cpu": "8"}


def _partitions_numa(e):
    devices, counters = partitions()
    rslice(e, "n1", DRA, devices, name="cpus", count=2)
    rslice(e, "n1", DRA, None, name="counters", sharedCounters=counters, count=2)
    cls(e, "numa", DRA, f'device.attributes["{DRA}"].type == "numa"')
    claim(e, "c", exactly("r", "numa"))
    return {"cpu": "32"}


def _accelerator(e):
    rslice(e, "n1", XPU, [xpu("xpu-model-x-001", "2", "8Gi"), xpu("xpu-model-x-002", "2", "8Gi")])
    cls(e, "ai-accelerators", XPU)
    claim(e, "c", exactly("r", "ai-accelerators", count=2))
    return {"cpu": "4", "memory": "16Gi"}


@pytest.mark.parametrize(
    "setup", [_individual, _pool, _pool_multiplier, _partitions_l3, _partitions_numa, _accelerator]
)
async def test_representations_map_to_node_allocatable_resources(setup):
    async with env() as e:
        e.node("n1", cpu="64", memory="512Gi")
        want = setup(e)
        pod(e, "p", [container("app", {"cpu": "100m"}, ("c",))], {"c": "c"})
        await e.wait(lambda: e.node_of("p"))
        assert statuses(e, "p") == [{"resourceClaimName": "c", "containers": ["app"], "resources": want}]
        expected = {k: amount(k, v) for k, v in want.items()}
        expected["cpu"] = expected["cpu"] + 100
        assert requested(e, "n1") == expected


# -- the KEP's use cases: effective demand and the node's requested ---------------------------


def _use_case_1(e):
    rslice(e, "node1", DRA, [socket()])
    cls(e, "cpu-mem-socket", DRA)
    claim(
        e,
        "cpu-mem-claim",
        exactly("cpu-mem-req", "cpu-mem-socket", capacity={f"{DRA}/cpu": "4", f"{DRA}/memory": "8Gi"}),
    )
    pod(
        e,
        "dra-pod",
        [
            container("my-app1", {"cpu": "100m", "memory": "100Mi"}, ("my-cpu-mem-claim",)),
            container("my-app2", None, ("my-cpu-mem-claim",)),
        ],
        {"my-cpu-mem-claim": "cpu-mem-claim"},
    )
    return (
        "dra-pod",
        [
            {
                "resourceClaimName": "cpu-mem-claim",
                "containers": ["my-app1", "my-app2"],
                "resources": {"cpu": "4", "memory": "8Gi"},
            }
        ],
        {"cpu": 4100, "memory": 8 * GI + 100 * MI},
    )  # the KEP's "4100m, 8.1Gi"


def _use_case_3(e):
    rslice(e, "node1", DRA, [socket(memory=None)])
    rslice(e, "node1", XPU, [xpu("gpu0", "2", "4Gi")])
    cls(e, "cpu-class", DRA)
    cls(e, "gpu-class", XPU)
    claim(e, "cpu-claim", exactly("cpu", "cpu-class", capacity={f"{DRA}/cpu": "10"}))
    claim(e, "gpu-claim", exactly("gpu", "gpu-class"))
    both = ("my-cpu-claim", "my-gpu-claim")
    pod(
        e,
        "combined-dra-pod",
        [
            container("my-app1", {"cpu": "100m", "memory": "1Gi"}, both),
            container("my-app2", {"cpu": "200m", "memory": "2Gi"}, both),
        ],
        {"my-cpu-claim": "cpu-claim", "my-gpu-claim": "gpu-claim"},
    )
    return (
        "combined-dra-pod",
        [
            {"resourceClaimName": "cpu-claim", "containers": ["my-app1", "my-app2"], "resources": {"cpu": "10"}},
            {
                "resourceClaimName": "gpu-claim",
                "containers": ["my-app1", "my-app2"],
                "resources": {"cpu": "2", "memory": "4Gi"},
            },
        ],
        {"cpu": 12300, "memory": 7 * GI},
    )  # the KEP's 12.3 CPU and 7Gi


def _use_case_4(e):
    rslice(e, "node1", DRA, cores(16))
    cls(e, "cpu-core", DRA)
    claim(e, "cpu-req-10-cpus", exactly("cpus", "cpu-core", count=10))
    shared = ("cpu-req-10-cpus",)
    pod(
        e,
        "dra-pod-with-plr-besteffort-sidecars",
        [
            container("my-app1", None, shared),
            container("my-app2", None, shared),
            container("sidecar-container-1"),
            container("sidecar-container-2"),
        ],
        {"cpu-req-10-cpus": "cpu-req-10-cpus"},
        resources={"requests": {"cpu": "11", "memory": "10Gi"}, "limits": {"cpu": "11", "memory": "10Gi"}},
    )
    return (
        "dra-pod-with-plr-besteffort-sidecars",
        [{"resourceClaimName": "cpu-req-10-cpus", "containers": ["my-app1", "my-app2"], "resources": {"cpu": "10"}}],
        {"cpu": 11000, "memory": 10 * GI},
    )  # pod-level requests take precedence: 11 CPU, 10Gi


def _multiple_claims_per_container(e):
    rslice(e, "node1", DRA, cores(8))
    cls(e, "cpu-core", DRA)
    claim(e, "claim-a", exactly("r", "cpu-core", count=4))
    claim(e, "claim-b", exactly("r", "cpu-core", count=2))
    pod(
        e,
        "pod1",
        [container("c1", {"cpu": "1"}, ("a", "b")), container("c2", {"cpu": "2"}, ("a",))],
        {"a": "claim-a", "b": "claim-b"},
    )
    return (
        "pod1",
        [
            {"resourceClaimName": "claim-a", "containers": ["c1", "c2"], "resources": {"cpu": "4"}},
            {"resourceClaimName": "claim-b", "containers": ["c1"], "resources": {"cpu": "2"}},
        ],
        {"cpu": 9000},
    )  # 1 + 4 + 2 + 2: claim A counted once


@pytest.mark.parametrize("setup", [_use_case_1, _use_case_3, _use_case_4, _multiple_claims_per_container])
async def test_kep_use_case_totals(setup):
    async with env() as e:
        e.node("node1", cpu="64", memory="512Gi")
        name, want_statuses, want_requested = setup(e)
        await e.wait(lambda: e.node_of(name))
        assert statuses(e, name) == want_statuses
        assert requested(e, "node1") == want_requested


async def test_kep_use_case_2_fungible_claim_ledger_differs_per_node():
    """A GPU or 30 CPUs (firstAvailable): on the node with a GPU nothing node-allocatable
    is taken (1 CPU, 1Gi); on the CPU-only node the claim takes 30 CPUs (31 CPU, 1Gi);
    a CPU-only node without room for 30 more CPUs is filtered out for that choice."""
    async with env() as e:
        for n, cpu in (("gpu-node", "4"), ("cpu-node", "64"), ("small-cpu-node", "16")):
            e.node(n, cpu=cpu, memory="64Gi", labels={"pool": n})
        rslice(e, "gpu-node", "gpu.example.com", [{"name": "gpu0"}])
        for n in ("cpu-node", "small-cpu-node"):
            rslice(e, n, DRA, [socket(memory=None)])
        cls(e, "gpu-class", "gpu.example.com")
        cls(e, "cpu-class", DRA)
        e.c.create(
            e.rt("resourceclaimtemplates", G),
            {
                "metadata": {"name": "gpu-or-cpu-template", "namespace": "default"},
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [
                                {
                                    "name": "gpu-or-cpu-req",
                                    "firstAvailable": [
                                        {"name": "gpu", "deviceClassName": "gpu-class", "count": 1},
                                        {
                                            "name": "cpu",
                                            "deviceClassName": "cpu-class",
                                            "capacity": {"requests": {f"{DRA}/cpu": "30"}},
                                        },
                                    ],
                                }
                            ]
                        }
                    }
                },
            },
        )
        app = [container("my-app", {"cpu": "1", "memory": "1Gi"}, ("gpu-or-cpu",))]
        for name, where in (("on-gpu", "gpu-node"), ("on-cpu", "cpu-node")):
            pod(e, name, app, templates={"gpu-or-cpu": "gpu-or-cpu-template"}, nodeSelector={"pool": where})
            await e.wait(lambda: e.node_of(name))
        assert statuses(e, "on-gpu") is None  # scenario A: the GPU was chosen
        assert requested(e, "gpu-node") == {"cpu": 1000, "memory": GI}
        [st] = statuses(e, "on-cpu")  # scenario B: 30 CPUs from the socket
        assert st["containers"] == ["my-app"] and st["resources"] == {"cpu": "30"}
        assert requested(e, "cpu-node") == {"cpu": 31000, "memory": GI}
        # on a 16-cpu node the CPU alternative does not fit; nothing else is possible there
        pod(
            e, "on-small", app, templates={"gpu-or-cpu": "gpu-or-cpu-template"}, nodeSelector={"pool": "small-cpu-node"}
        )
        ev = await e.wait(lambda: e.events("on-small"))
        assert ev[0]["message"].startswith(
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."
        )
        assert requested(e, "small-cpu-node") == {}


# -- Filter and the ledger ------------------------------------------------------------------


async def test_ledger_holds_claimed_cpus_until_the_pod_goes():
    async with env() as e:
        e.node("n1", cpu="8")
        rslice(e, "n1", DRA, cores(4, per_core="2"))
        cls(e, "cpu-core", DRA)
        claim(e, "six", exactly("r", "cpu-core", count=3))
        pod(e, "claims", [container("c", None, ("x",))], {"x": "six"})
        await e.wait(lambda: e.node_of("claims"))
        assert requested(e, "n1") == {"cpu": 6000}
        # NodeResourcesFit sees the claim's cpus in the ledger
        pod(e, "asks", [container("c", {"cpu": "4"})])
        ev = await e.wait(lambda: e.events("asks"))
        assert ev[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
        e.c.delete(e.rt("pods"), "default", "claims", {"gracePeriodSeconds": 0})
        await e.wait(lambda: e.node_of("asks"))
        assert requested(e, "n1") == {"cpu": 4000}


async def test_dynamicresources_filter_names_the_resource_and_counts_what_pods_request():
    async with env() as e:
        e.node("n1", cpu="8", memory="8Gi")
        rslice(e, "n1", XPU, [xpu("x0", "1", "6Gi")])
        cls(e, "xpu", XPU)
        pod(e, "memory-hog", [container("c", {"memory": "4Gi"})])
        await e.wait(lambda: e.node_of("memory-hog"))
        claim(e, "x", exactly("r", "xpu"))
        pod(e, "needs-host-memory", [container("c", None, ("x",))], {"x": "x"})
        ev = await e.wait(lambda: e.events("needs-host-memory"))
        # 4Gi requested + 6Gi the accelerator needs > 8Gi: preemption could help
        assert ev[0]["message"] == (
            "0/1 nodes are available: 1 Insufficient memory. still not schedulable, preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )
        e.c.delete(e.rt("pods"), "default", "memory-hog", {"gracePeriodSeconds": 0})
        await e.wait(lambda: e.node_of("needs-host-memory"))
        assert requested(e, "n1") == {"memory": 6 * GI, "cpu": 1000}


async def test_demand_beyond_the_whole_node_is_unresolvable():
    async with env() as e:
        e.node("n1", cpu="4")
        rslice(e, "n1", DRA, cores(8))
        cls(e, "cpu-core", DRA)
        claim(e, "six", exactly("r", "cpu-core", count=6))
        pod(e, "p", [container("c", None, ("x",))], {"x": "six"})
        ev = await e.wait(lambda: e.events("p"))
        assert ev[0]["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. still not schedulable, preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling."
        )


async def test_claim_used_by_another_pod_is_unresolvable_on_its_node_and_unavailable_elsewhere():
    async with env() as e:
        e.node("n1", cpu="8")
        e.node("n2", cpu="8")
        rslice(e, "n1", DRA, cores(4))
        cls(e, "cpu-core", DRA)
        claim(e, "mine", exactly("r", "cpu-core", count=2))
        pod(e, "first", [container("c", None, ("x",))], {"x": "mine"})
        await e.wait(lambda: e.node_of("first"))
        pod(e, "second", [container("c", None, ("x",))], {"x": "mine"})
        ev = await e.wait(lambda: e.events("second"))
        assert ev[0]["message"] == (
            "0/2 nodes are available: 1 node allocatable resource claim mine is already used by another pod, "
            "1 resourceclaim not available on the node. still not schedulable, preemption: 0/2 nodes are "
            "available: 2 Preemption is not helpful for scheduling."
        )
        assert e.sched.cache.nodes["n1"].claim_consumers == {
            ("default", "mine"): {e.get_pod("first")["metadata"]["uid"]}
        }
        e.c.delete(e.rt("pods"), "default", "first", {"gracePeriodSeconds": 0})
        await e.wait(lambda: e.node_of("second"))
        assert statuses(e, "second")[0]["resourceClaimName"] == "mine"


async def test_pod_level_budget_must_cover_the_claims():
    async with env() as e:
        e.node("n1", cpu="16")
        rslice(e, "n1", DRA, cores(8))
        cls(e, "cpu-core", DRA)
        claim(e, "four", exactly("r", "cpu-core", count=4))
        pod(e, "tight", [container("c", {"cpu": "1"}, ("x",))], {"x": "four"}, resources={"requests": {"cpu": "3"}})
        ev = await e.wait(lambda: e.events("tight"))
        assert ev[0]["message"].startswith(
            "0/1 nodes are available: 1 pod level request for cpu is insufficient to cover the aggregated "
            "container and node-allocatable DRA requests."
        )
        assert "1 Preemption is not helpful for scheduling" in ev[0]["message"]
        # a budget that covers container + claim schedules, and the budget is what the node counts
        claim(e, "four-b", exactly("r", "cpu-core", count=4))
        pod(e, "roomy", [container("c", {"cpu": "1"}, ("x",))], {"x": "four-b"}, resources={"requests": {"cpu": "6"}})
        await e.wait(lambda: e.node_of("roomy"))
        assert requested(e, "n1") == {"cpu": 6000}


async def test_prebind_writes_the_status_before_binding():
    async with env() as e:
        e.node("n1", cpu="8")
        rslice(e, "n1", DRA, cores(4))
        cls(e, "cpu-core", DRA)
        claim(e, "two", exactly("r", "cpu-core", count=2))
        seen: list[tuple[bool, bool]] = []
        e.sched.informers["pods"].add_handler(
            lambda typ, obj, prev: seen.append(
                (
                    bool((obj.get("spec") or {}).get("nodeName")),
                    bool((obj.get("status") or {}).get("nodeAllocatableResourceClaimStatuses")),
                )
            )
        )
        pod(e, "p", [container("init", None, ("x",))], {"x": "two"}, initContainers=[container("setup", None, ("x",))])
        await e.wait(lambda: e.node_of("p"))
        await e.settle()
        assert statuses(e, "p") == [
            {"resourceClaimName": "two", "containers": ["setup", "init"], "resources": {"cpu": "2"}}
        ]
        # the status (unbound) came before the binding
        assert (False, True) in seen and seen.index((False, True)) < seen.index((True, True))


async def test_unreserve_clears_the_status_when_binding_fails():
    from mockkube.machinery import errors

    async with env() as e:
        e.node("n1", cpu="8")
        rslice(e, "n1", DRA, cores(4))
        cls(e, "cpu-core", DRA)
        claim(e, "two", exactly("r", "cpu-core", count=2))
        real_bind, calls = e.sched.client.bind, []

        def flaky_bind(ns, name, node):
            calls.append(name)
            if len(calls) == 1:
                raise errors.APIError(500, "InternalError", "injected binding failure")
            return real_bind(ns, name, node)

        e.sched.client.bind = flaky_bind
        seen: list[tuple[bool, bool]] = []
        e.sched.informers["pods"].add_handler(
            lambda typ, obj, prev: seen.append(
                (
                    bool((obj.get("spec") or {}).get("nodeName")),
                    bool((obj.get("status") or {}).get("nodeAllocatableResourceClaimStatuses")),
                )
            )
        )
        pod(e, "p", [container("c", None, ("x",))], {"x": "two"})
        await e.wait(lambda: e.node_of("p"))
        await e.settle()
        assert len(calls) == 2
        written = [i for i, s in enumerate(seen) if s == (False, True)]
        cleared = [i for i, s in enumerate(seen) if s == (False, False)]
        # written in the first PreBind, cleared by Unreserve, written again, then bound
        assert written and any(written[0] < c < written[-1] for c in cleared)
        assert statuses(e, "p") == [{"resourceClaimName": "two", "containers": ["c"], "resources": {"cpu": "2"}}]
        assert requested(e, "n1") == {"cpu": 2000}
