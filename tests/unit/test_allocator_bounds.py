"""How the allocator is bounded: the caller's interrupt is asked at every search step,
and a claim over the results limit is refused before any search (upstream v1.36)."""

from __future__ import annotations

from _dra_builders import NOW, claim, dclass, dev, first_available, node, req, slice_, sub

from mockkube.dra.allocator import Allocator
from mockkube.dra.state import AllocatedState


def exploding_pool(devices: int = 40, budget: int = 10) -> list[dict]:
    """Every device takes one unit of a shared counter that only has ``budget`` units:
    asking for budget+1 devices makes a depth-first search try every combination."""
    devs = []
    for i in range(devices):
        d = dev(f"d{i}")
        d["consumesCounters"] = [{"counterSet": "cs", "counters": {"units": {"value": "1"}}}]
        devs.append(d)
    pool = slice_("devs", devs, count=2)
    counters = slice_(
        "counters", [], count=2, sharedCounters=[{"name": "cs", "counters": {"units": {"value": str(budget)}}}]
    )
    return [pool, counters]


class Steps:
    """An interrupt that gives up after ``limit`` questions (deterministic: no clock)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked > self.limit


def test_interrupt_is_asked_at_every_step_and_ends_the_search():
    alloc = Allocator(exploding_pool(), [dclass()])
    stop = Steps(20_000)
    out = alloc.allocate([claim("c", req(count=11))], node(), AllocatedState(), NOW, interrupt=stop)
    assert out.interrupted and not out.ok and not out.fatal
    assert stop.asked == 20_001


def test_interrupt_that_never_fires_changes_nothing():
    alloc = Allocator(exploding_pool(budget=20), [dclass()])
    stop = Steps(10**9)
    out = alloc.allocate([claim("c", req(count=11))], node(), AllocatedState(), NOW, interrupt=stop)
    assert out.ok and not out.interrupted and len(out.results[0]["devices"]["results"]) == 11
    assert stop.asked > 11


def test_claim_over_the_results_limit_is_an_error_before_searching():
    alloc = Allocator([slice_("s", [dev(f"d{i}") for i in range(40)])], [dclass()])
    asked = Steps(10**9)
    c = claim("c", req("a", count=20), req("b", count=13))
    out = alloc.allocate([c], node(), AllocatedState(), NOW, interrupt=asked)
    assert out.fatal and asked.asked == 0
    assert out.reason == "claim default/c: number of requested devices 33 exceeds the claim limit of 32"
    assert alloc.allocate([claim("ok", req(count=32))], node(), AllocatedState(), NOW).ok


def test_claim_limit_counts_the_smallest_first_available_alternative():
    alloc = Allocator([slice_("s", [dev(f"d{i}") for i in range(40)])], [dclass()])
    c = claim("c", req("a", count=31), first_available("b", sub("big", count=8), sub("one", count=1)))
    assert alloc.allocate([c], node(), AllocatedState(), NOW).ok
    c = claim("c2", req("a", count=31), first_available("b", sub("big", count=8), sub("two", count=2)))
    out = alloc.allocate([c], node(), AllocatedState(), NOW)
    assert out.fatal and "number of requested devices 33 exceeds the claim limit of 32" in out.reason
