"""Pools as upstream's GatherPools judges them for one node: counter sets a device
consumes must be its pool's own (else the pool is invalid and a failed allocation says
"invalid resource pools were encountered"), and the newest generation is chosen among the
slices that concern the node."""

from __future__ import annotations

from _dra_builders import DRIVER, NOW, claim, dclass, dev, node, picked, req, slice_

from mockkube.dra.allocator import REASON_CANNOT_ALLOCATE, Allocator
from mockkube.dra.state import AllocatedState

INVALID = "invalid resource pools were encountered"


def run(slices, claims, n=None, classes=None):
    return Allocator(slices, classes or [dclass()]).allocate(claims, n or node(), AllocatedState(), NOW)


def part(name: str, counter_set: str = "cs", counter: str = "mem", value: str = "1Gi") -> dict:
    d = dev(name)
    d["consumesCounters"] = [{"counterSet": counter_set, "counters": {counter: {"value": value}}}]
    return d


def counters(name: str, sets: list[str], pool: str = "n1", count: int = 2, generation: int = 1) -> dict:
    return slice_(
        name,
        [],
        pool=pool,
        count=count,
        generation=generation,
        sharedCounters=[{"name": cs, "counters": {"mem": {"value": "4Gi"}}} for cs in sets],
    )


def test_counters_of_the_pool_allow_allocation():
    out = run([slice_("s", [part("p0")], count=2), counters("c", ["cs"])], [claim("c", req())])
    assert picked(out) == ["p0"]


def test_device_consuming_a_counter_set_its_pool_does_not_define_makes_the_pool_invalid():
    out = run([slice_("s", [part("p0", "other")], count=2), counters("c", ["cs"])], [claim("c", req())])
    assert not out.ok and not out.fatal and out.reason == INVALID


def test_device_consuming_a_counter_its_counter_set_does_not_have_makes_the_pool_invalid():
    out = run([slice_("s", [part("p0", counter="cores")], count=2), counters("c", ["cs"])], [claim("c", req())])
    assert not out.ok and out.reason == INVALID


def test_device_consuming_another_pools_counter_set_makes_its_pool_invalid():
    out = run(
        [slice_("s", [part("p0")], pool="p-devices"), counters("c", ["cs"], pool="p-counters", count=1)],
        [claim("c", req())],
    )
    assert not out.ok and out.reason == INVALID


def test_slices_repeating_a_counter_set_name_make_the_pool_invalid():
    out = run(
        [slice_("s", [part("p0")], count=3), counters("c1", ["cs"], count=3), counters("c2", ["cs"], count=3)],
        [claim("c", req())],
    )
    assert not out.ok and out.reason == INVALID


def test_invalid_pool_does_not_hide_devices_of_valid_pools_and_all_mode_names_it():
    slices = [
        slice_("s", [part("p0", "other")], pool="bad", count=2),
        counters("c", ["cs"], pool="bad"),
        slice_("good", [dev("g0")], pool="good"),
    ]
    assert picked(run(slices, [claim("c", req())])) == ["g0"]
    out = run(slices, [claim("c", req(mode="All"))])
    assert out.fatal and out.reason == (
        f"claim default/c, request gpu: asks for all devices, but resource pool {DRIVER}/bad is currently invalid"
    )


def test_newer_generation_for_another_node_does_not_make_this_nodes_complete_pool_obsolete():
    slices = [
        slice_("old", [dev("a")], node_name="n1", pool="p", generation=1),
        slice_("new", [dev("b")], node_name="n2", pool="p", generation=2),
    ]
    assert picked(run(slices, [claim("c", req())], node("n1"))) == ["a"]
    assert picked(run(slices, [claim("c", req())], node("n2"))) == ["b"]


def test_incomplete_generation_with_a_newer_one_elsewhere_is_ignored():
    slices = [
        slice_("old", [dev("a")], node_name="n1", pool="p", generation=1, count=2),
        slice_("new", [dev("b")], node_name="n2", pool="p", generation=2),
    ]
    out = run(slices, [claim("c", req(mode="All"))], node("n1"))
    assert not out.ok and not out.fatal and out.reason == REASON_CANNOT_ALLOCATE  # not "being updated"


def test_pool_spread_over_nodes_is_complete_with_all_of_its_generation():
    slices = [
        slice_("s1", [dev("a")], node_name="n1", pool="p", count=2),
        slice_("s2", [dev("b")], node_name="n2", pool="p", count=2),
    ]
    assert picked(run(slices, [claim("c", req(mode="All"))], node("n1"))) == ["a"]
    out = run(slices[:1], [claim("c", req(mode="All"))], node("n1"))
    assert out.fatal and "is currently being updated" in out.reason


def test_device_names_are_judged_among_the_slices_of_the_node():
    slices = [
        slice_("s1", [dev("gpu-0")], node_name="n1", pool="p", count=2),
        slice_("s2", [dev("gpu-0")], node_name="n2", pool="p", count=2),
    ]
    assert picked(run(slices, [claim("c", req())], node("n1"))) == ["gpu-0"]
    dup = [
        slice_("s1", [dev("gpu-0")], node_name="n1", pool="p", count=2),
        slice_("s2", [dev("gpu-0")], node_name="n1", pool="p", count=2),
    ]
    out = run(dup, [claim("c", req(count=3))], node("n1"))
    assert not out.ok and out.reason == INVALID


def test_counter_sets_concern_every_node_so_another_nodes_pool_can_be_invalid_or_incomplete_here():
    # GatherPools counts a slice with counter sets for every node: n2's pool is one of
    # n1's pools too (without devices there), so its state shows on n1 as upstream's does
    other = [
        slice_("n2-dev", [part("p0")], node_name="n2", pool="n2", count=3),
        counters("n2-c1", ["cs"], pool="n2", count=3),
        counters("n2-c2", ["cs"], pool="n2", count=3),
    ]
    mine = [slice_("n1-dev", [dev("g0")], node_name="n1", pool="n1")]
    assert picked(run(mine + other, [claim("c", req())], node("n1"))) == ["g0"]
    out = run(mine + other, [claim("c", req(count=2))], node("n1"))
    assert not out.ok and not out.fatal and out.reason == INVALID
    out = run(mine + other[:2], [claim("c", req(mode="All"))], node("n1"))
    assert out.fatal and out.reason == (
        f"claim default/c, request gpu: asks for all devices, but resource pool {DRIVER}/n2 is currently being updated"
    )
    complete = [slice_("n2-dev", [part("p0")], node_name="n2", pool="n2"), counters("n2-c1", ["cs"], pool="n2")]
    complete[0]["spec"]["pool"]["resourceSliceCount"] = 2
    assert picked(run(mine + complete, [claim("c", req(mode="All"))], node("n1"))) == ["g0"]


def test_other_nodes_sound_counter_pools_stay_out_of_a_nodes_view():
    # judged once per index rather than once per node: a node view carries only its own
    # pools (thousands of nodes with partitionable devices made views quadratic)
    slices = []
    for i in range(50):
        d = slice_(f"n{i}-dev", [part("p0")], node_name=f"n{i}", pool=f"n{i}", count=2)
        slices += [d, counters(f"n{i}-c", ["cs"], pool=f"n{i}")]
    alloc = Allocator(slices, [dclass()])
    view = alloc.node_view(node("n7"))
    assert [p.name for p, _ in view.pools] == ["n7"] and view.remote == []
    assert picked(alloc.allocate([claim("c", req())], node("n7"), AllocatedState(), NOW)) == ["p0"]
