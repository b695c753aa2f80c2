"""The results limit (32 per claim) cuts a branch as soon as the claim's later requests
could no longer fit, as upstream's allocator does, instead of trying every combination
of devices for an earlier request first (exponential: C(64, 32) for the case below)."""

from __future__ import annotations

from _dra_builders import NOW, claim, dclass, dev, first_available, picked, slice_, sub

from mockkube.dra.allocator import Allocator
from mockkube.dra.state import AllocatedState


def test_first_alternative_that_would_exceed_the_limit_with_later_requests_is_cut_at_once():
    devices = [dev(f"d{i:02d}") for i in range(64)]
    c = claim(
        "c",
        first_available("a", sub("all", count=32), sub("half", count=16)),
        first_available("b", sub("all", count=32), sub("half", count=16)),
    )
    steps = 0

    def interrupt() -> bool:
        nonlocal steps
        steps += 1
        return steps > 10_000

    out = Allocator([slice_("s", devices)], [dclass()]).allocate(
        [c], {"metadata": {"name": "n1"}}, AllocatedState(), NOW, interrupt=interrupt
    )
    assert not out.interrupted, "searched combinations that cannot fit the results limit"
    assert picked(out) == [f"d{i:02d}" for i in range(32)]
    assert out.subrequests == [{"a": 1, "b": 1}]
    assert steps < 100
