"""DynamicResources filterTimeout (v1.36): a search that runs past it is a scheduling
*error* naming the node, retried with backoff; the pod schedules once it can."""

from __future__ import annotations

from tests.unit._sched_helpers import DRIVER, G, env


def exploding(e, node: str, budget: int) -> None:
    """40 devices sharing a counter of ``budget`` units: 11 of them explode the search."""
    devs = [
        {"name": f"d{i}", "consumesCounters": [{"counterSet": "cs", "counters": {"units": {"value": "1"}}}]}
        for i in range(40)
    ]
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    e.c.create(
        e.rt("resourceslices", G),
        {
            "metadata": {"name": f"{node}-devs"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": pool, "devices": devs},
        },
    )
    e.c.create(
        e.rt("resourceslices", G),
        {
            "metadata": {"name": f"{node}-counters"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": pool,
                "sharedCounters": [{"name": "cs", "counters": {"units": {"value": str(budget)}}}],
            },
        },
    )


async def test_timeout_is_a_scheduler_error_naming_the_node_and_the_pod_retries():
    async with env(filter_timeout=0.05) as e:
        e.node("n1")
        exploding(e, "n1", budget=10)
        e.device_class()
        e.template("eleven", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 11}}])
        e.pod("p", template="eleven")
        await e.wait(lambda: e.events("p"), timeout=10)
        msg = 'running "DynamicResources" filter plugin: node n1: timed out trying to allocate devices'
        cond = e.condition("p")
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "SchedulerError", msg)
        assert e.events("p")[0]["message"] == msg and e.events("p")[0]["type"] == "Warning"
        # an error goes through backoff, not the unschedulable pool: it is tried again
        attempts = e.sched.queue.entries["default/p"].attempts
        await e.wait(
            lambda: "default/p" in e.sched.queue.entries and e.sched.queue.entries["default/p"].attempts > attempts,
            timeout=10,
        )
        # enough units for 11 devices: the next attempt finds them at once
        e.c.patch(
            e.rt("resourceslices", G),
            "",
            "n1-counters",
            {"spec": {"sharedCounters": [{"name": "cs", "counters": {"units": {"value": "20"}}}]}},
        )
        await e.wait(lambda: e.node_of("p") == "n1", timeout=10)
        assert len(e.devices_of("p")) == 11


async def test_zero_turns_the_timeout_off():
    async with env(filter_timeout=0) as e:
        assert e.sched.dra_plugin.filter_timeout == 0
        e.node("n1")
        exploding(e, "n1", budget=20)
        e.device_class()
        e.template("eleven", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 11}}])
        e.pod("p", template="eleven")
        await e.wait(lambda: e.node_of("p") == "n1", timeout=10)
