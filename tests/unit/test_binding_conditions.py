"""KEP-5007 readiness and timeout rules (upstream isClaimReadyForBinding, isClaimTimeout,
isPodReadyForBinding) and the PreBind waiter, driven by a fake clock."""

from __future__ import annotations

import pytest

from mockkube.machinery import meta
from mockkube.scheduler.plugins import bindingconditions as bc
from mockkube.testing.clock import FakeClock

OK, BAD = "x.example.com/ready", "x.example.com/failed"


def claim(
    name: str, allocated_at: float | None, *conds: tuple[str, str], device: str = "d0", binding: bool = True
) -> dict:
    result = {"request": "r", "driver": "x.example.com", "pool": "p", "device": device}
    if binding:
        result.update(bindingConditions=[OK], bindingFailureConditions=[BAD])
    alloc = {"devices": {"results": [result]}}
    if allocated_at is not None:
        alloc["allocationTimestamp"] = meta.rfc3339(allocated_at)
    st: dict = {"allocation": alloc}
    if conds:
        st["devices"] = [
            {
                "driver": "x.example.com",
                "pool": "p",
                "device": device,
                "conditions": [{"type": t, "status": s, "reason": "Why", "message": "because"} for t, s in conds],
            }
        ]
    return {"metadata": {"name": name, "namespace": "ns"}, "status": st}


def test_ready_only_when_every_binding_condition_is_true():
    assert not bc.claim_ready(claim("c", 0))
    assert not bc.claim_ready(claim("c", 0, (OK, "False")))
    assert bc.claim_ready(claim("c", 0, (OK, "True")))
    assert bc.claim_ready(claim("c", 0, binding=False))  # nothing to wait for
    assert not bc.claim_ready({"metadata": {"name": "c"}, "status": {}})


def test_failure_condition_is_an_error_with_upstreams_message():
    with pytest.raises(bc.BindingFailed) as e:
        bc.claim_ready(claim("c", 0, (OK, "True"), (BAD, "True")))
    assert str(e.value) == 'claim c binding failed: reason=Why, message="because"'


def test_timeout_counts_from_allocation_timestamp():
    c = claim("c", 1000.0)
    assert not bc.claim_timed_out(c, 1000.0 + 600, 600)
    assert bc.claim_timed_out(c, 1000.0 + 601, 600)
    assert not bc.claim_timed_out(claim("c", None), 10**10, 600)  # no timestamp, no timeout
    assert bc.claim_unavailable(c, 1000.0 + 601, 600)
    assert not bc.claim_unavailable(claim("c", 1000.0, (OK, "True")), 10**10, 600)  # ready never times out
    assert bc.claim_unavailable(claim("c", 1000.0, (BAD, "True")), 1000.0, 600)


class _Claims(dict):
    def get_claim(self, ns: str, name: str):
        return self.get((ns, name))


def _waiter(claims: _Claims, clock: FakeClock, timeout: float = 600):
    outcomes: list[tuple[str, str]] = []
    w = bc.BindingWaiter(claims.get_claim, clock, timeout, None)
    return w, outcomes


def test_shared_claim_times_out_from_its_earlier_allocation():
    """A pod that joins a claim allocated long ago inherits its deadline (KEP: the
    timeout is measured from allocationTimestamp, not from this pod's PreBind)."""
    clock = FakeClock(10_000.0)
    claims = _Claims({("ns", "shared"): claim("shared", 10_000.0 - 590)})
    w, out = _waiter(claims, clock)
    w.add("ns/late", [claims[("ns", "shared")]], lambda s, m: out.append((s, m)))
    assert "ns/late" in w and not out
    clock.advance(11)
    w.resync()
    assert out == [("timeout", "claim shared binding timeout")] and "ns/late" not in w


def test_multi_claim_pod_waits_for_all_and_fails_on_any():
    clock = FakeClock(10_000.0)
    claims = _Claims({("ns", "a"): claim("a", 10_000.0), ("ns", "b"): claim("b", 10_000.0, device="d1")})
    w, out = _waiter(claims, clock)
    w.add("ns/p", list(claims.values()), lambda s, m: out.append((s, m)))
    claims[("ns", "a")] = claim("a", 10_000.0, (OK, "True"))
    w.claim_changed(claims[("ns", "a")])
    assert not out  # b is not ready yet
    claims[("ns", "b")] = claim("b", 10_000.0, (OK, "True"), device="d1")
    w.claim_changed(claims[("ns", "b")])
    assert out == [("success", "")]

    out.clear()
    claims[("ns", "b")] = claim("b", 10_000.0, device="d1")
    w.add("ns/q", list(claims.values()), lambda s, m: out.append((s, m)))
    claims[("ns", "b")] = claim("b", 10_000.0, (BAD, "True"), device="d1")
    w.claim_changed(claims[("ns", "b")])
    assert out == [("failure", 'claim b binding failed: reason=Why, message="because"')]


def test_deleted_claim_ends_the_wait_and_cancel_is_silent():
    clock = FakeClock(10_000.0)
    claims = _Claims({("ns", "a"): claim("a", 10_000.0)})
    w, out = _waiter(claims, clock)
    w.add("ns/p", [claims[("ns", "a")]], lambda s, m: out.append((s, m)))
    w.add("ns/q", [claims[("ns", "a")]], lambda s, m: out.append(("q-" + s, m)))
    assert w.cancel("ns/q") and not w.cancel("ns/q")
    gone = claims.pop(("ns", "a"))
    w.claim_changed(gone)
    assert out == [("failure", 'resourceclaim "a" not found')]


class _Server:
    def __init__(self, cluster=None, binding_timeout=None):
        self.cluster = cluster
        self.binding_timeout = binding_timeout


def test_binding_timeout_flag_then_profile_then_ten_minutes():
    from mockkube.cli.main import build_parser
    from mockkube.config.profile import ProfileError
    from mockkube.scheduler import binding_timeout

    assert build_parser().parse_args(["serve", "--binding-timeout", "90s"]).binding_timeout == 90.0
    assert build_parser().parse_args(["serve"]).binding_timeout is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--binding-timeout", "soon"])
    profile = {"nodes": [], "scheduler": {"bindingTimeout": "2m"}}
    assert binding_timeout(_Server()) == 600.0
    assert binding_timeout(_Server(profile)) == 120.0
    assert binding_timeout(_Server(profile, binding_timeout=30.0)) == 30.0
    with pytest.raises(ProfileError, match="scheduler"):
        binding_timeout(_Server({"nodes": [], "scheduler": {"bindingTimout": "2m"}}))
