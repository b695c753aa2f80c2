"""Scheduler details that a v1.36 kube-scheduler shows and mockkube must too: the
DynamicResources PostFilter reason for pods without claims, allocationTimestamp on every
claim PreBind writes (DRADeviceBindingConditions is on by default in v1.36)."""

from __future__ import annotations

from tests.unit._sched_helpers import env


async def test_pod_without_claims_gets_the_dynamicresources_postfilter_reason():
    async with env() as e:
        e.node("n1", cpu="1")
        e.pod("big", requests={"cpu": "2"})
        ev = await e.wait(lambda: e.events("big"))
        assert ev[0]["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes "
            "are available: 1 No preemption victims found for incoming pod."
        )


async def test_prebind_stamps_allocation_timestamp_on_every_claim():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 2)
        e.device_class()
        e.template("t")
        e.pod("a", template="t")
        await e.wait(lambda: e.node_of("a"))
        alloc = e.claim_of("a")["status"]["allocation"]
        assert alloc["allocationTimestamp"].endswith("Z")
        # a shared claim reserved by a second pod keeps its first timestamp
        e.claim("shared")
        e.pod("s1", claim="shared")
        await e.wait(lambda: e.node_of("s1"))
        first = e.claim_of("s1")["status"]["allocation"]["allocationTimestamp"]
        e.pod("s2", claim="shared")
        await e.wait(lambda: e.node_of("s2"))
        claim = e.claim_of("s2")
        assert claim["status"]["allocation"]["allocationTimestamp"] == first
        assert [r["name"] for r in claim["status"]["reservedFor"]] == ["s1", "s2"]


def _cores(n: int) -> list[dict]:
    return [
        {"name": f"core-{i}", "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "2"}}}
        for i in range(n)
    ]


async def test_node_allocatable_claim_accounting_sharing_and_container_reference():
    async with env() as e:
        e.node("n1", cpu="8")
        e.slice("n1", _cores(4))
        e.device_class()
        e.claim("cores")
        e.pod("a", claim="cores")
        await e.wait(lambda: e.node_of("a"))
        assert e.get_pod("a")["status"]["nodeAllocatableResourceClaimStatuses"] == [
            {"resourceClaimName": "cores", "containers": ["c"], "resources": {"cpu": "2"}}
        ]
        # KEP-5517 alpha: the claim is not shared with a second pod
        e.pod("b", claim="cores")
        ev = await e.wait(lambda: e.events("b"))
        assert ev[0]["message"] == (
            "0/1 nodes are available: 1 node allocatable resource claim cores is already used by another pod. "
            "still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
            "scheduling."
        )
        # the 2 cpus the claim maps are counted: 7 more do not fit on the 8-cpu node
        e.pod("big", requests={"cpu": "7"})
        ev = await e.wait(lambda: e.events("big"))
        assert ev[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
        # a node-allocatable claim must be referenced by a container
        e.template("t", [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}])
        e.c.create(
            e.rt("pods"),
            {
                "metadata": {"name": "orphan", "namespace": "default"},
                "spec": {
                    "resourceClaims": [{"name": "x", "resourceClaimTemplateName": "t"}],
                    "containers": [{"name": "c", "image": "busybox"}],
                },
            },
        )
        ev = await e.wait(lambda: e.events("orphan"))
        assert "node-allocatable resource claim not referenced by any container within the pod" in ev[0]["message"]
