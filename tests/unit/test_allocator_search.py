from _dra_builders import DRIVER, NOW, attr, claim, dclass, dev, first_available, node, picked, req, slice_, sub

from mockkube.dra.allocator import Allocator
from mockkube.dra.state import AllocatedState


def run(slices, classes, claims, state=None):
    return Allocator(slices, classes).allocate(claims, node(), state or AllocatedState(), NOW)


def test_backtracking_across_requests():
    # "any" would greedily take the only h100, starving "h100"; the search swaps them.
    devices = [dev("h", model="h100"), dev("a", model="a100")]
    out = run(
        [slice_("s", devices)],
        [dclass()],
        [claim("c", req("any"), req("h100", "gpu", 1, f'{attr("model")} == "h100"'))],
    )
    assert picked(out) == ["a", "h"]
    assert [r["request"] for r in out.results[0]["devices"]["results"]] == ["any", "h100"]


def test_backtracking_across_claims():
    devices = [dev("h", model="h100"), dev("a", model="a100")]
    out = run(
        [slice_("s", devices)],
        [dclass()],
        [claim("c1", req()), claim("c2", req("gpu", "gpu", 1, f'{attr("model")} == "h100"'))],
    )
    assert picked(out, 0) == ["a"] and picked(out, 1) == ["h"]


def test_match_attribute_constraint_backtracks():
    devices = [dev("g0", numa=0), dev("g1", numa=1), dev("g2", numa=1)]
    c = claim("c", req("a"), req("b"), constraints=[{"requests": ["a", "b"], "matchAttribute": f"{DRIVER}/numa"}])
    out = run([slice_("s", devices)], [dclass()], [c])
    assert picked(out) == ["g1", "g2"]


def test_match_attribute_missing_attribute_fails():
    devices = [dev("g0"), dev("g1")]
    c = claim("c", req(count=2), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    assert not run([slice_("s", devices)], [dclass()], [c]).ok


def test_match_attribute_only_named_requests():
    devices = [dev("g0", numa=0), dev("g1", numa=1), dev("g2", numa=1)]
    c = claim(
        "c", req("free"), req("a"), req("b"), constraints=[{"requests": ["a", "b"], "matchAttribute": f"{DRIVER}/numa"}]
    )
    assert picked(run([slice_("s", devices)], [dclass()], [c])) == ["g0", "g1", "g2"]


def test_distinct_attribute_constraint():
    devices = [dev("g0", numa=0), dev("g1", numa=0), dev("g2", numa=1)]
    c = claim("c", req(count=2), constraints=[{"distinctAttribute": f"{DRIVER}/numa"}])
    assert picked(run([slice_("s", devices)], [dclass()], [c])) == ["g0", "g2"]


def test_constraint_with_all_mode_violation_is_fatal():
    devices = [dev("g0", numa=0), dev("g1", numa=1)]
    c = claim("c", req(mode="All"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    out = run([slice_("s", devices)], [dclass()], [c])
    assert out.fatal and "cannot add device gpu.example.com/n1/g1 because a claim constraint" in out.reason


def test_first_available_prefers_first_then_falls_back():
    devices = [dev("g0", model="a100"), dev("g1", model="a100")]
    c = claim("c", first_available("gpu", sub("big", "gpu", 1, f'{attr("model")} == "h100"'), sub("small", "gpu", 2)))
    out = run([slice_("s", devices)], [dclass()], [c])
    assert [r["request"] for r in out.results[0]["devices"]["results"]] == ["gpu/small", "gpu/small"]
    assert out.subrequests == [{"gpu": 1}] and out.score == 7
    c2 = claim("c2", first_available("gpu", sub("one", "gpu", 1), sub("two", "gpu", 2)))
    out = run([slice_("s", devices)], [dclass()], [c2])
    assert out.subrequests == [{"gpu": 0}] and picked(out) == ["g0"]


def test_first_available_backtracks_into_later_subrequest_for_constraint():
    devices = [dev("g0", numa=0), dev("g1", numa=1), dev("g2", numa=1)]
    c = claim(
        "c",
        req("a"),
        first_available("b", sub("x", "gpu", 1, f"{attr('numa')} == 0"), sub("y", "gpu", 1)),
        constraints=[{"requests": ["a", "b"], "matchAttribute": f"{DRIVER}/numa"}],
    )
    out = run([slice_("s", devices)], [dclass()], [c])
    # a=g0 leaves no numa-0 device for b (x or y) -> backtrack: a=g1, b/x=g0 violates, b/y=g2
    assert picked(out) == ["g1", "g2"]
    assert out.subrequests == [{"b": 1}]


def test_first_available_with_subrequest_constraint_names_and_config():
    devices = [dev("g0", numa=0), dev("g1", numa=1)]
    c = claim(
        "c",
        first_available("b", sub("x", "gpu", 1, f"{attr('numa')} == 7"), sub("y", "gpu", 1)),
        config=[
            {"requests": ["b/y"], "opaque": {"driver": DRIVER, "parameters": {}}},
            {"requests": ["b/x"], "opaque": {"driver": DRIVER, "parameters": {}}},
        ],
    )
    out = run([slice_("s", devices)], [dclass()], [c])
    assert [cfg["requests"] for cfg in out.results[0]["devices"]["config"]] == [["b/y"]]


def test_two_claims_do_not_share_a_device():
    out = run([slice_("s", [dev("g0"), dev("g1")])], [dclass()], [claim("c1", req()), claim("c2", req())])
    assert picked(out, 0) == ["g0"] and picked(out, 1) == ["g1"]
    assert not run([slice_("s", [dev("g0")])], [dclass()], [claim("c1", req()), claim("c2", req())]).ok


def test_in_flight_reservations_via_state():
    alloc = Allocator([slice_("s", [dev("g0"), dev("g1")])], [dclass()])
    state = AllocatedState()
    first = alloc.allocate([claim("c1", req())], node(), state, NOW)
    state.add(first.results[0])
    second = alloc.allocate([claim("c2", req())], node(), state, NOW)
    assert picked(second) == ["g1"]
    state.remove(first.results[0])
    assert picked(alloc.allocate([claim("c3", req())], node(), state, NOW)) == ["g0"]


def test_fast_path_agrees_with_full_search(monkeypatch):
    import mockkube.dra.allocator as mod

    devices = [dev(f"g{i}", model="h100" if i % 3 == 0 else "a100") for i in range(7)]
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "x", "driver": DRIVER, "pool": "n1", "device": "g1"}]}})
    scenarios = [
        [claim("c", req(count=3))],
        [claim("c", req(count=7))],
        [claim("c", req("a", "gpu", 2), req("h", "gpu", 2, f'{attr("model")} == "h100"'))],
        [claim("c1", req(count=2)), claim("c2", req("h", "gpu", 1, f'{attr("model")} == "h100"'))],
        [claim("c", req(count=3, tolerations=[{"operator": "Exists"}]))],
    ]
    fast = [Allocator([slice_("s", devices)], [dclass()]).allocate(s, node(), state, NOW) for s in scenarios]
    monkeypatch.setattr(mod, "_fast_path", lambda *a: None)
    slow = [Allocator([slice_("s", devices)], [dclass()]).allocate(s, node(), state, NOW) for s in scenarios]
    for f, s in zip(fast, slow):
        assert (f.ok, f.results, f.reason) == (s.ok, s.results, s.reason)
    assert [f.ok for f in fast] == [True, False, True, True, True]


def test_one_device_fast_path_agrees_with_full_search(monkeypatch):
    """The one-claim one-device path (cached plain candidates, first free one) answers as
    the full search does, and hands over whenever a candidate is not plain or errs."""
    import mockkube.dra.allocator as mod

    used = {
        "devices": {"results": [{"request": "x", "driver": DRIVER, "pool": "n1", "device": d} for d in ("g0", "g1")]}
    }
    tainted = dict(dev("g2"), taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    bad = dev("g2")  # no model: the selector's lookup is a CEL runtime error
    cases = [
        ([dev("g0"), dev("g1"), dev("g2"), dev("g3")], [claim("c", req())], used),  # skips the used ones
        ([dev("g0"), dev("g1")], [claim("c", req())], used),  # all in use
        ([dev("g0"), dev("g1"), tainted, dev("g3")], [claim("c", req())], used),  # not plain: full search
        ([dev("g0"), dev("g1"), tainted, dev("g3")], [claim("c", req(tolerations=[{"operator": "Exists"}]))], used),
        (
            [dev("g0", model="a"), dev("g1", model="a"), bad, dev("g3", model="a")],
            [claim("c", req("gpu", "gpu", 1, f'{attr("model")} == "a"'))],
            used,
        ),  # CEL error reached
        (
            [dev("g0", model="a"), bad, dev("g3", model="a")],
            [claim("c", req("gpu", "gpu", 1, f'{attr("model")} == "a"'))],
            {},
        ),  # error never reached
    ]

    def outcomes():
        out = []
        for devices, claims, taken in cases:
            state = AllocatedState()
            if taken:
                state.add(taken)
            alloc = Allocator([slice_("s", devices)], [dclass()])
            first = alloc.allocate(claims, node(), state, NOW)
            again = alloc.allocate(claims, node(), state, NOW)  # from the node's cached candidates
            out.append([(o.ok, o.results, o.reason, o.fatal, o.cel_errors, o.subrequests) for o in (first, again)])
        return out

    fast = outcomes()
    monkeypatch.setattr(mod, "_fast_path", lambda *a: None)
    slow = outcomes()
    assert fast == slow
    assert [f[0][0] for f in fast] == [True, False, True, True, False, True]
    assert picked_names(fast[0]) == ["g2"] and picked_names(fast[3]) == ["g2"] and picked_names(fast[2]) == ["g3"]


def picked_names(outcomes: list) -> list[str]:
    return [r["device"] for r in outcomes[0][1][0]["devices"]["results"]]


def test_plans_are_kept_per_claim_newest_version_and_forgotten_with_the_claim():
    """The plan cache was keyed by every version of every claim ever planned and held 4,096
    of them (claim objects included) before it cleared: the soak benchmark's scheduler
    process crept by ~1 MB a minute. One entry per claim now, gone with the claim."""
    from mockkube.scheduler.dra_manager import DRAManager

    a = Allocator([slice_("s", [dev("g0"), dev("g1")])], [dclass()])
    c1 = claim("c1", req())
    assert picked(a.allocate([c1], node(), AllocatedState(), NOW)) == ["g0"]
    newer = dict(c1, metadata=dict(c1["metadata"], resourceVersion="2"))
    assert picked(a.allocate([newer], node(), AllocatedState(), NOW)) == ["g0"]
    assert list(a._plans) == ["uid-c1"] and a._plans["uid-c1"][0][2] == "2"  # the newest version only
    for i in range(50):
        a.allocate([claim(f"c{i}", req(), uid=f"u{i}")], node(), AllocatedState(), NOW)
    assert len(a._plans) == 51
    a.forget_claim("uid-c1")
    assert "uid-c1" not in a._plans

    m = DRAManager()
    m.allocator = a
    gone = claim("c7", req(), uid="u7")
    m.set_claim(gone)
    m.remove_claim(gone)  # the scheduler's informer saw it deleted
    assert "u7" not in a._plans and len(a._plans) == 49
