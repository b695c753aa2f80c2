"""Node filters, scoring helpers and the queue, over the in-process API."""

from __future__ import annotations

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.scheduler import fit_error, num_feasible_nodes_to_find
from tests.unit._sched_helpers import env


@pytest.mark.parametrize("nodes,want", [(3, 3), (99, 99), (100, 100), (500, 230), (5000, 500), (100000, 5000)])
def test_num_feasible_nodes_to_find(nodes, want):
    assert num_feasible_nodes_to_find(nodes) == want


def test_fit_error_histogram_is_sorted():
    st = {
        "a": fw.unschedulable("Insufficient cpu", "Too many pods"),
        "b": fw.unschedulable("Insufficient cpu"),
        "c": fw.unresolvable("node(s) didn't match Pod's node affinity/selector"),
    }
    assert fit_error(3, st) == (
        "0/3 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node "
        "affinity/selector, 2 Insufficient cpu."
    )


async def _reason(e, name):
    ev = await e.wait(lambda: e.events(name))
    return ev[0]["message"]


async def test_node_selector_and_required_affinity():
    async with env() as e:
        e.node("n1", labels={"zone": "a"})
        e.node("n2", labels={"zone": "b"})
        e.pod("sel", nodeSelector={"zone": "b"})
        aff = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            }
        }
        e.pod("aff", affinity=aff)
        e.pod("none", nodeSelector={"zone": "c"})
        await e.wait(lambda: e.node_of("sel") and e.node_of("aff"))
        assert (e.node_of("sel"), e.node_of("aff")) == ("n2", "n1")
        assert await _reason(e, "none") == (
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/2 nodes "
            "are available: 2 Preemption is not helpful for scheduling."
        )
        e.node("n3", labels={"zone": "c"})
        await e.wait(lambda: e.node_of("none") == "n3")


async def test_preferred_affinity_wins_the_score():
    async with env() as e:
        for i in range(4):
            e.node(f"n{i}", labels={"gpu": "yes" if i == 2 else "no"})
        aff = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "preference": {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["yes"]}]},
                    }
                ]
            }
        }
        e.pod("p", affinity=aff)
        await e.wait(lambda: e.node_of("p"))
        assert e.node_of("p") == "n2"


async def test_taints_and_tolerations_and_unschedulable_nodes():
    async with env() as e:
        e.node("n1", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
        e.node("n2", unschedulable=True)
        e.pod("p")
        assert await _reason(e, "p") == (
            "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were "
            "unschedulable. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not "
            "helpful for scheduling."
        )
        e.pod("tol", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
        await e.wait(lambda: e.node_of("tol") == "n1")


async def test_resources_fit_cpu_memory_pods_and_extended():
    async with env() as e:
        e.node("n1", cpu="2", memory="4Gi", pods="2", extra={"example.com/foo": "1"})
        e.pod("a", requests={"cpu": "1500m"})
        await e.wait(lambda: e.node_of("a") == "n1")
        e.pod("big", requests={"cpu": "1", "memory": "8Gi"})
        assert await _reason(e, "big") == (
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. no new claims to deallocate, "
            "preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )
        e.pod("foo", requests={"example.com/foo": "1"})
        await e.wait(lambda: e.node_of("foo") == "n1")
        e.pod("third")
        msg = await _reason(e, "third")
        assert msg.startswith("0/1 nodes are available: 1 Too many pods.")
        # deleting a pod frees room
        e.c.delete(e.rt("pods"), "default", "a", {"gracePeriodSeconds": 0})
        e.c.finalize_delete(e.rt("pods"), "default", "a")
        await e.wait(lambda: e.node_of("third") == "n1")


async def test_node_name_bypasses_and_other_schedulers_are_ignored():
    async with env() as e:
        e.node("n1")
        e.pod("fixed", nodeName="elsewhere")
        e.pod("other", schedulerName="my-scheduler")
        e.pod("mine")
        await e.wait(lambda: e.node_of("mine") == "n1")
        await e.settle()
        assert e.node_of("fixed") == "elsewhere"
        assert e.node_of("other") is None and e.events("other") == []
