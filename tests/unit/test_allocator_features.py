import itertools

import pytest
from _dra_builders import DRIVER, NOW, claim, dclass, dev, node, picked, req, slice_

from mockkube.dra.allocator import Allocator
from mockkube.dra.state import AllocatedState
from mockkube.dra.taints import tolerates


def run(slices, classes, claims, state=None, n=None, rules=(), **kw):
    return Allocator(slices, classes, rules).allocate(claims, n or node(), state or AllocatedState(), NOW, **kw)


# -- taints


@pytest.mark.parametrize(
    "toleration,taint,want",
    [
        ({"operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"key": "k", "effect": "NoSchedule"}, False),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "operator": "Equal", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerates(toleration, taint, want):
    assert tolerates(toleration, taint) is want


@pytest.mark.parametrize(
    "effect,tolerated,ok",
    [
        ("NoSchedule", False, False),
        ("NoExecute", False, False),
        ("None", False, True),
        ("NoSchedule", True, True),
        ("NoExecute", True, True),
    ],
)
def test_device_taint_effects(effect, tolerated, ok):
    d = dev("g0")
    d["taints"] = [{"key": "health", "value": "bad", "effect": effect}]
    tolerations = [{"key": "health", "operator": "Exists"}] if tolerated else []
    out = run([slice_("s", [d])], [dclass()], [claim("c", req(tolerations=tolerations) if tolerations else req())])
    assert out.ok is ok
    if ok and tolerated:
        assert out.results[0]["devices"]["results"][0]["tolerations"] == tolerations


def test_device_taint_rule_taints_selected_device():
    rule = {
        "metadata": {"name": "r"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "device": "g0"},
            "taint": {"key": "maint", "effect": "NoSchedule"},
        },
    }
    alloc = Allocator([slice_("s", [dev("g0"), dev("g1")])], [dclass()], [rule])
    assert picked(alloc.allocate([claim("c", req())], node(), AllocatedState(), NOW)) == ["g1"]
    alloc.remove_taint_rule("r")
    assert picked(alloc.allocate([claim("c", req())], node(), AllocatedState(), NOW)) == ["g0"]
    alloc.update_taint_rule({"metadata": {"name": "none"}, "spec": {"taint": {"key": "x", "effect": "NoExecute"}}})
    assert picked(alloc.allocate([claim("c", req())], node(), AllocatedState(), NOW)) == ["g0"]  # no selector
    alloc.update_taint_rule(
        {"metadata": {"name": "all"}, "spec": {"deviceSelector": {}, "taint": {"key": "x", "effect": "NoExecute"}}}
    )
    assert not alloc.allocate([claim("c", req())], node(), AllocatedState(), NOW).ok


# -- partitionable devices (shared counters)


def partitioned_slice() -> dict:
    counters = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "40Gi"}}}]
    parts = []
    for name, size in (("whole", "40Gi"), ("half-0", "20Gi"), ("half-1", "20Gi")):
        d = dev(name)
        d["consumesCounters"] = [{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": size}}}]
        parts.append(d)
    return slice_("s", parts, sharedCounters=counters)


def test_counters_partitions_exclude_each_other():
    out = run([partitioned_slice()], [dclass()], [claim("c", req(count=2))])
    assert picked(out) == ["half-0", "half-1"]  # "whole" uses all memory; backtracking finds halves
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "n1", "device": "half-0"}]}})
    out = run([partitioned_slice()], [dclass()], [claim("c", req())], state)
    assert picked(out) == ["half-1"]  # whole no longer fits
    state.add(out.results[0])
    assert not run([partitioned_slice()], [dclass()], [claim("c", req())], state).ok


def test_counters_from_separate_counter_slice():
    pool = partitioned_slice()
    counters_only = slice_("counters", [], sharedCounters=pool["spec"].pop("sharedCounters"), count=2)
    pool["spec"]["pool"]["resourceSliceCount"] = 2
    out = run([pool, counters_only], [dclass()], [claim("c", req(count=2))])
    assert picked(out) == ["half-0", "half-1"]


# -- consumable capacity


def shared_nic(policy: dict | None = None) -> dict:
    d = dev("nic")
    d["allowMultipleAllocations"] = True
    d["capacity"] = {"bandwidth": {"value": "10G", **({"requestPolicy": policy} if policy else {})}}
    return slice_("s", [d])


def ids():
    counter = itertools.count()
    return lambda: f"share-{next(counter)}"


def test_capacity_shared_device_records_share_and_consumption():
    out = run(
        [shared_nic()], [dclass()], [claim("c", req(capacity={"requests": {"bandwidth": "4G"}}))], new_share_id=ids()
    )
    r = out.results[0]["devices"]["results"][0]
    assert r["shareID"] == "share-0" and r["consumedCapacity"] == {"bandwidth": "4G"}


def test_capacity_sums_shares_until_full():
    state = AllocatedState()
    alloc = Allocator([shared_nic()], [dclass()])
    c = claim("c", req(capacity={"requests": {"bandwidth": "4G"}}))
    for _ in range(2):
        out = alloc.allocate([c], node(), state, NOW, new_share_id=ids())
        assert out.ok
        state.add(out.results[0])
    assert not alloc.allocate([c], node(), state, NOW).ok  # 8G used, 4G more does not fit


def test_capacity_same_shared_device_twice_in_one_request():
    out = run(
        [shared_nic()],
        [dclass()],
        [claim("c", req(count=2, capacity={"requests": {"bandwidth": "5G"}}))],
        new_share_id=ids(),
    )
    assert picked(out) == ["nic", "nic"]
    assert [r["shareID"] for r in out.results[0]["devices"]["results"]] == ["share-0", "share-1"]


@pytest.mark.parametrize(
    "policy,request_,consumed",
    [
        ({"default": "1G", "validRange": {"min": "1G", "step": "1G"}}, None, "1G"),
        ({"default": "1G", "validRange": {"min": "1G", "step": "1G"}}, "1500M", "2G"),
        ({"default": "1G", "validRange": {"min": "2G"}}, "500M", "2G"),
        ({"default": "1G", "validValues": ["1G", "5G", "10G"]}, "2G", "5G"),
        (None, None, "10G"),
    ],
)
def test_capacity_request_policy_rounding(policy, request_, consumed):
    kw = {"capacity": {"requests": {"bandwidth": request_}}} if request_ else {}
    out = run([shared_nic(policy)], [dclass()], [claim("c", req(**kw))], new_share_id=ids())
    assert out.results[0]["devices"]["results"][0]["consumedCapacity"] == {"bandwidth": consumed}


def test_capacity_policy_max_violation_skips_device():
    out = run(
        [shared_nic({"default": "1G", "validRange": {"min": "1G", "max": "4G"}})],
        [dclass()],
        [claim("c", req(capacity={"requests": {"bandwidth": "5G"}}))],
    )
    assert not out.ok


def test_capacity_request_for_unknown_capacity_skips_device():
    out = run([shared_nic()], [dclass()], [claim("c", req(capacity={"requests": {"memory": "1"}}))])
    assert not out.ok


# -- binding conditions (KEP-5007)


def fabric_dev(name: str, binds: bool = True) -> dict:
    d = dev(name)
    d["bindingConditions"] = ["dra.example.com/attached"]
    d["bindingFailureConditions"] = ["dra.example.com/failed"]
    d["bindsToNode"] = binds
    return d


def test_binding_conditions_device_used_when_nothing_else_and_binds_to_node():
    out = run(
        [slice_("fabric", [fabric_dev("f0")], node_name=None, pool="fabric", allNodes=True)],
        [dclass()],
        [claim("c", req())],
    )
    alloc = out.results[0]
    r = alloc["devices"]["results"][0]
    assert r["bindingConditions"] == ["dra.example.com/attached"]
    assert r["bindingFailureConditions"] == ["dra.example.com/failed"]
    assert "allocationTimestamp" not in alloc  # PreBind stamps it, as upstream's bindClaim
    assert alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]


def test_binding_conditions_without_binds_to_node_and_all_nodes_has_no_node_selector():
    out = run(
        [slice_("fabric", [fabric_dev("f0", binds=False)], node_name=None, pool="fabric", allNodes=True)],
        [dclass()],
        [claim("c", req())],
    )
    assert "nodeSelector" not in out.results[0]


def test_binding_conditions_preference_over_pool_order():
    fabric = slice_("fabric", [fabric_dev("f0")], node_name=None, pool="a-fabric", allNodes=True)
    local = slice_("local", [dev("l0")], pool="z-local")
    assert picked(run([fabric, local], [dclass()], [claim("c", req())])) == ["l0"]
    assert picked(run([fabric, local], [dclass()], [claim("c", req(count=2))])) == ["f0", "l0"]


# -- node targeting


def test_node_selector_slice_and_merged_allocation_selector():
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    s = slice_("s", [dev("g0")], node_name=None, pool="rack1", nodeSelector=sel)
    out = run([s], [dclass()], [claim("c", req())], n=node("n1", {"rack": "r1"}))
    assert out.results[0]["nodeSelector"] == sel
    assert not run([s], [dclass()], [claim("c", req())], n=node("n2", {"rack": "r2"})).ok


def test_node_view_follows_label_changes():
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    alloc = Allocator([slice_("s", [dev("g0")], node_name=None, pool="rack1", nodeSelector=sel)], [dclass()])
    assert not alloc.allocate([claim("c", req())], node("n1", {"rack": "r2"}), AllocatedState(), NOW).ok
    assert alloc.allocate([claim("c", req())], node("n1", {"rack": "r1"}), AllocatedState(), NOW).ok


def test_incremental_slice_and_class_updates():
    alloc = Allocator([], [])
    c = claim("c", req())
    assert alloc.allocate([c], node(), AllocatedState(), NOW).fatal  # class missing
    alloc.update_class(dclass())
    assert not alloc.allocate([c], node(), AllocatedState(), NOW).ok
    alloc.update_slice(slice_("s", [dev("g0")]))
    assert picked(alloc.allocate([c], node(), AllocatedState(), NOW)) == ["g0"]
    alloc.update_slice(slice_("s", [dev("g9")], generation=2))
    assert picked(alloc.allocate([c], node(), AllocatedState(), NOW)) == ["g9"]
    alloc.update_class(dclass("gpu", 'device.driver == "other"'))
    assert not alloc.allocate([c], node(), AllocatedState(), NOW).ok
    alloc.update_class(dclass())
    alloc.remove_slice("s")
    assert not alloc.allocate([c], node(), AllocatedState(), NOW).ok


def test_duplicate_device_names_make_pool_invalid():
    out = run([slice_("s", [dev("g0"), dev("g0")])], [dclass()], [claim("c", req())])
    assert not out.ok and "invalid resource pools" in out.reason
