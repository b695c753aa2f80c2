"""A node whose only pool is invalid (a device consumes a counter set the pool does not
define) is rejected with upstream's exact status, which the FailedScheduling event counts
like any other reason."""

from __future__ import annotations

from tests.unit._sched_helpers import env


async def test_invalid_pool_is_named_in_the_failed_scheduling_event():
    async with env() as e:
        e.node("n1")
        e.slice(
            "n1",
            [{"name": "gpu-0", "consumesCounters": [{"counterSet": "missing", "counters": {"mem": {"value": "1Gi"}}}]}],
        )
        e.device_class()
        e.claim("c")
        e.pod("p", claim="c")
        ev = await e.wait(lambda: e.events("p"))
        assert ev[0]["message"].startswith("0/1 nodes are available: 1 invalid resource pools were encountered.")
        assert e.condition("p")["reason"] == "Unschedulable"
