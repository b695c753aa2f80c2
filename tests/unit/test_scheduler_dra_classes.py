"""A claim naming a DeviceClass that does not exist: upstream's PreFilter makes the pod
unschedulable with "request <r>: device class <c> does not exist" (not a scheduler error)
and the pod is tried again when the class appears."""

from __future__ import annotations

from tests.unit._sched_helpers import env


async def test_missing_class_is_unschedulable_from_prefilter_and_retried_when_it_appears():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.claim("c")
        e.pod("p", claim="c")
        ev = await e.wait(lambda: e.events("p"))
        # upstream's PostFilter finds no claims in its state (PreFilter returned before
        # recording them): "no new claims to deallocate"
        assert ev[0]["message"] == (
            "0/1 nodes are available: request gpu: device class gpu does not exist. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )
        cond = e.condition("p")
        assert cond["reason"] == "Unschedulable" and cond["status"] == "False"
        e.device_class()
        await e.wait(lambda: e.node_of("p") == "n1")


async def test_missing_class_of_a_subrequest_names_the_subrequest():
    async with env() as e:
        e.node("n1")
        e.slice("n1", 1)
        e.device_class()
        e.claim(
            "c",
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "big-gpu"},
                        {"name": "any", "deviceClassName": "gpu"},
                    ],
                }
            ],
        )
        e.pod("p", claim="c")
        ev = await e.wait(lambda: e.events("p"))
        assert ev[0]["message"].startswith(
            "0/1 nodes are available: request gpu/big: device class big-gpu does not exist."
        )
        assert e.condition("p")["reason"] == "Unschedulable"
