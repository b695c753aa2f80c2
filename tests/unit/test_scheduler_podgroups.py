"""The pod group scheduling cycle (GenericWorkload) and GangScheduling on a running
scheduler: all or nothing for a gang, each pod on its merit for a basic group, the
PodGroupScheduled condition, the gates, and KEP-5729 claims shared by the group."""

from __future__ import annotations

from tests.unit._sched_helpers import G, env

ALL = {"GenericWorkload": True, "GangScheduling": True, "DRAWorkloadResourceClaims": True}
V1ALPHA2 = {"scheduling.k8s.io/v1alpha2": True}  # served only when asked for, as v1.36
S = "scheduling.k8s.io"


def pod_group(e, name: str, min_count: int | None = None, claims: list | None = None) -> dict:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    spec: dict = {"schedulingPolicy": policy}
    if claims:
        spec["resourceClaims"] = claims
    return e.c.create(e.rt("podgroups", S), {"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def member(e, name: str, group: str, cpu: str = "3", **kw) -> dict:
    return e.pod(name, requests={"cpu": cpu}, schedulingGroup={"podGroupName": group}, **kw)


def group_condition(e, name: str) -> dict | None:
    pg = e.c.get(e.rt("podgroups", S), "default", name)
    return next((c for c in (pg.get("status") or {}).get("conditions") or [] if c["type"] == "PodGroupScheduled"), None)


async def test_basic_group_schedules_each_pod_on_its_merit():
    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        e.node("n1")
        e.node("n2")
        pod_group(e, "web")
        for i in range(3):
            member(e, f"w{i}", "web")
        await e.wait(lambda: sum(bool(e.node_of(f"w{i}")) for i in range(3)) == 2)
        await e.wait(lambda: e.condition(next(f"w{i}" for i in range(3) if not e.node_of(f"w{i}"))))
        left = next(f"w{i}" for i in range(3) if not e.node_of(f"w{i}"))
        assert e.condition(left)["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
        c = await e.wait(lambda: group_condition(e, "web"))
        assert (c["status"], c["reason"], c["message"]) == ("True", "Scheduled", "")


async def test_gang_binds_its_quorum_and_leaves_the_rest():
    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        e.node("n1")
        e.node("n2")
        pod_group(e, "g", 2)
        for i in range(3):
            member(e, f"p{i}", "g")
        await e.wait(lambda: sum(bool(e.node_of(f"p{i}")) for i in range(3)) == 2)
        assert (await e.wait(lambda: group_condition(e, "g")))["status"] == "True"
        # a later pod that does not fit never turns the condition back to False
        member(e, "p3", "g")
        await e.wait(lambda: e.condition("p3"))
        await e.settle()
        assert group_condition(e, "g")["status"] == "True"


async def test_gang_all_or_nothing():
    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        e.node("n1")
        e.node("n2")
        pod_group(e, "g", 3)
        for i in range(3):
            member(e, f"p{i}", "g")
        c = await e.wait(lambda: group_condition(e, "g"))
        assert (c["status"], c["reason"], c["message"]) == ("False", "Unschedulable", "pod group is unschedulable")
        await e.wait(lambda: all(e.condition(f"p{i}") for i in range(3)))
        await e.settle()
        assert not any(e.node_of(f"p{i}") for i in range(3))
        msgs = sorted(e.condition(f"p{i}")["message"] for i in range(3))
        assert msgs[0].startswith("0/2 nodes are available: 2 Insufficient cpu.")
        assert msgs[1:] == ["pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"] * 2
        e.node("n3")  # room appears: the whole gang goes
        await e.wait(lambda: all(e.node_of(f"p{i}") for i in range(3)))
        assert await e.wait(lambda: (c := group_condition(e, "g")) and c["status"] == "True" and c)


async def test_gang_waits_for_its_pod_group_and_quorum():
    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        e.node("n1")
        member(e, "p0", "later", cpu="1")
        member(e, "p1", "later", cpu="1")
        await e.settle()
        assert not e.node_of("p0") and e.condition("p0") is None  # PreEnqueue writes nothing
        pod_group(e, "later", 3)
        await e.settle()
        assert not e.node_of("p0")  # 2 of minCount 3 pods exist
        member(e, "p2", "later", cpu="1")
        await e.wait(lambda: all(e.node_of(f"p{i}") for i in range(3)))


async def test_without_gang_scheduling_a_gang_is_not_all_or_nothing():
    async with env(runtime_config=V1ALPHA2, feature_gates={"GenericWorkload": True}) as e:
        e.node("n1")
        e.node("n2")
        pod_group(e, "g", 3)
        for i in range(3):
            member(e, f"p{i}", "g")
        await e.wait(lambda: sum(bool(e.node_of(f"p{i}")) for i in range(3)) == 2)


async def test_without_generic_workload_the_group_is_ignored():
    async with env(runtime_config=V1ALPHA2) as e:
        e.node("n1")
        member(e, "p0", "nowhere")
        await e.wait(lambda: e.node_of("p0"))


async def test_claim_shared_by_the_group_is_allocated_once():
    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        e.node("n1", cpu="8")
        e.device_class()
        e.slice("n1", 1)
        e.claim("shared")
        pg = pod_group(e, "g", 2, claims=[{"name": "gpu", "resourceClaimName": "shared"}])
        member(e, "a", "g", cpu="1", claim="shared")
        member(e, "b", "g", cpu="1", claim="shared")
        await e.wait(lambda: e.node_of("a") and e.node_of("b"))
        claim = e.c.get(e.rt("resourceclaims", G), "default", "shared")
        assert claim["status"]["reservedFor"] == [
            {"apiGroup": S, "resource": "podgroups", "name": "g", "uid": pg["metadata"]["uid"]}
        ]
        assert len(claim["status"]["allocation"]["devices"]["results"]) == 1
        # without the gate each pod would need the device: the second one waits
        e.claim("solo")
        e.pod("c", claim="solo")
        await e.wait(lambda: e.condition("c"))
        assert not e.node_of("c")


async def test_claim_not_shared_without_the_gate():
    async with env(runtime_config=V1ALPHA2, feature_gates={"GenericWorkload": True, "GangScheduling": True}) as e:
        e.node("n1", cpu="8")
        e.device_class()
        e.slice("n1", 1)
        e.claim("shared")
        pod_group(e, "g", 1, claims=[{"name": "gpu", "resourceClaimName": "shared"}])
        member(e, "a", "g", cpu="1", claim="shared")
        await e.wait(lambda: e.node_of("a"))
        claim = e.c.get(e.rt("resourceclaims", G), "default", "shared")
        assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["pods"]


async def test_pod_group_protection_finalizer():
    """pkg/controller/podgroupprotection: the finalizer while active pods reference the group."""
    from mockkube.controllers.podgroupprotection import FINALIZER, PodGroupProtectionController

    async with env(runtime_config=V1ALPHA2, feature_gates=ALL) as e:
        ctrl = PodGroupProtectionController(e.server)
        await ctrl.start()
        try:
            e.node("n1")
            pod_group(e, "g")
            member(e, "p0", "g", cpu="1")
            rt = e.rt("podgroups", S)
            await e.wait(lambda: FINALIZER in (e.c.get(rt, "default", "g")["metadata"].get("finalizers") or ()))
            e.c.delete(rt, "default", "g")
            await e.settle()
            assert e.c.get(rt, "default", "g")["metadata"]["deletionTimestamp"]  # p0 still uses it
            e.c.delete(e.rt("pods"), "default", "p0", {"gracePeriodSeconds": 0})
            await e.wait(lambda: e.c.get(rt, "default", "g") is None)
        finally:
            await ctrl.stop()
