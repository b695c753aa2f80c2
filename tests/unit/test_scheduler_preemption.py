"""Priority admission, priority ordering and DefaultPreemption (cpu and DRA devices)."""

from __future__ import annotations

import pytest

from mockkube.machinery import errors
from tests.unit._sched_helpers import env


def _classes(e):
    for name, value in (("low", 10), ("high", 1000)):
        e.c.create(e.rt("priorityclasses", "scheduling.k8s.io"), {"metadata": {"name": name}, "value": value})


def _cond(pod: dict, ctype: str) -> dict | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or () if c["type"] == ctype), None)


async def test_priority_admission_resolves_class_names():
    async with env(scheduler=False) as e:
        _classes(e)
        assert e.pod("a", priorityClassName="high")["spec"]["priority"] == 1000
        p = e.pod("b", priorityClassName="system-node-critical")
        assert (p["spec"]["priority"], p["spec"]["preemptionPolicy"]) == (2000001000, "PreemptLowerPriority")
        assert e.pod("c")["spec"]["priority"] == 0
        with pytest.raises(errors.APIError) as ei:
            e.pod("d", priorityClassName="nope")
        assert (ei.value.code, ei.value.message) == (
            403,
            'pods "d" is forbidden: no PriorityClass with name nope was found',
        )
        with pytest.raises(errors.APIError) as ei:
            e.pod("f", priorityClassName="high", priority=5)
        assert (
            "the integer value of priority (5) must not be provided in pod spec; priority admission "
            "controller computed 1000 from the given PriorityClass name" in ei.value.message
        )


async def test_higher_priority_pod_preempts_on_cpu():
    async with env() as e:
        _classes(e)
        e.node("n1", cpu="2")
        e.pod("victim", requests={"cpu": "2"}, priorityClassName="low", terminationGracePeriodSeconds=0)
        await e.wait(lambda: e.node_of("victim") == "n1")
        e.pod("other-low", requests={"cpu": "1"}, priorityClassName="low")
        e.pod("big", requests={"cpu": "1500m"}, priorityClassName="high")
        await e.wait(lambda: e.node_of("big") == "n1")
        assert e.get_pod("victim") is None
        ev = await e.wait(lambda: e.events("victim", "Preempted"))
        assert ev[0]["message"].startswith("Preempted by pod ")
        assert ev[0]["message"].endswith(" on node n1")
        assert (e.get_pod("big")["status"] or {}).get("nominatedNodeName") == "n1"
        assert e.node_of("other-low") is None  # low priority never preempts


async def test_preemption_marks_victim_with_disruption_target():
    async with env() as e:
        _classes(e)
        e.node("n1", cpu="1")
        e.pod("victim", requests={"cpu": "1"}, priorityClassName="low")  # 30 s grace: stays terminating
        await e.wait(lambda: e.node_of("victim") == "n1")
        e.pod("big", requests={"cpu": "1"}, priorityClassName="high")
        v = await e.wait(lambda: (p := e.get_pod("victim")) and p["metadata"].get("deletionTimestamp") and p)
        cond = _cond(v, "DisruptionTarget")
        assert cond["status"] == "True" and cond["reason"] == "PreemptionByScheduler"
        assert cond["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
        assert (await e.wait(lambda: (e.get_pod("big").get("status") or {}).get("nominatedNodeName"))) == "n1"
        assert e.sched._terminating_on_nominated(e.get_pod("big"))  # no second round of victims meanwhile


async def test_preemption_policy_never_does_not_preempt():
    async with env() as e:
        e.c.create(
            e.rt("priorityclasses", "scheduling.k8s.io"),
            {"metadata": {"name": "polite"}, "value": 1000, "preemptionPolicy": "Never"},
        )
        e.node("n1", cpu="1")
        e.pod("victim", requests={"cpu": "1"}, terminationGracePeriodSeconds=0)
        await e.wait(lambda: e.node_of("victim") == "n1")
        e.pod("big", requests={"cpu": "1"}, priorityClassName="polite")
        ev = await e.wait(lambda: e.events("big"))
        assert "preemption: not eligible due to preemptionPolicy=Never." in ev[0]["message"]
        assert e.get_pod("victim") is not None


async def test_preemption_frees_the_victims_dra_device():
    async with env() as e:
        _classes(e)
        e.node("n1")
        e.device_class()
        e.slice("n1", 1)
        e.template("t")
        e.pod("victim", template="t", priorityClassName="low", terminationGracePeriodSeconds=0)
        await e.wait(lambda: e.node_of("victim") == "n1")
        e.pod("big", template="t", priorityClassName="high")
        await e.wait(lambda: e.node_of("big") == "n1", timeout=10)
        assert e.get_pod("victim") is None
        assert e.devices_of("big") == ["gpu-0"]


async def test_preemption_prefers_the_node_whose_victims_no_budget_protects():
    async with env() as e:
        _classes(e)
        e.node("n1", cpu="1")
        e.node("n2", cpu="1")
        pdb_rt = e.rt("poddisruptionbudgets", "policy")
        pdb = e.c.create(
            pdb_rt,
            {
                "metadata": {"name": "keep", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "kept"}}},
            },
        )
        e.c.update_status(
            pdb_rt,
            dict(
                pdb,
                status={
                    "observedGeneration": 1,
                    "disruptionsAllowed": 0,
                    "currentHealthy": 1,
                    "desiredHealthy": 1,
                    "expectedPods": 1,
                },
            ),
        )
        kept = e.pod("kept", requests={"cpu": "1"}, priorityClassName="low", nodeName="n1")
        e.c.patch(e.rt("pods"), "default", "kept", {"metadata": {"labels": {"app": "kept"}}})
        e.pod("free", requests={"cpu": "1"}, priorityClassName="low", nodeName="n2", terminationGracePeriodSeconds=0)
        await e.wait(lambda: e.sched.cache.has_pod(kept["metadata"]["uid"]))
        await e.wait(lambda: len(e.sched.assigned_pods("n2")) == 1)
        e.pod("big", requests={"cpu": "1"}, priorityClassName="high")
        await e.wait(lambda: e.node_of("big") == "n2")
        assert e.get_pod("kept") is not None and e.get_pod("free") is None
