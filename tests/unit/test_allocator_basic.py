import pytest
from _dra_builders import DRIVER, NOW, attr, claim, dclass, dev, node, picked, req, slice_

from mockkube.dra.allocator import REASON_CANNOT_ALLOCATE, Allocator
from mockkube.dra.state import AllocatedState


def gpus(n: int = 4) -> list[dict]:
    return [dev(f"gpu-{i}", model="a100" if i < 2 else "h100", index=i) for i in range(n)]


def run(slices, classes, claims, state=None, n=None, **kw):
    alloc = Allocator(slices, classes, kw.pop("rules", ()))
    return alloc.allocate(claims, n or node(), state or AllocatedState(), NOW, **kw)


def test_one_device_default_count_and_result_shape():
    out = run([slice_("s", gpus())], [dclass()], [claim("c", req())])
    assert out.ok and out.reason == ""
    alloc = out.results[0]
    assert alloc["devices"]["results"] == [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]
    assert alloc["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    assert "allocationTimestamp" not in alloc  # PreBind stamps it (test_scheduler_dra_upstream)


def test_exact_count_with_request_selector():
    out = run([slice_("s", gpus())], [dclass()], [claim("c", req("gpu", "gpu", 2, f'{attr("model")} == "h100"'))])
    assert picked(out) == ["gpu-2", "gpu-3"]


def test_exact_count_too_many_fails():
    out = run([slice_("s", gpus())], [dclass()], [claim("c", req(count=5))])
    assert not out.ok and out.reason == REASON_CANNOT_ALLOCATE and not out.fatal


def test_all_mode_takes_every_matching_device():
    out = run(
        [slice_("s", gpus())],
        [dclass()],
        [claim("c", req("gpu", "gpu", None, f'{attr("model")} == "a100"', mode="All"))],
    )
    assert picked(out) == ["gpu-0", "gpu-1"]


def test_all_mode_fails_without_devices_and_when_one_is_taken():
    out = run(
        [slice_("s", gpus())], [dclass()], [claim("c", req("gpu", "gpu", None, f'{attr("model")} == "x"', mode="All"))]
    )
    assert not out.ok and not out.fatal
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "n1", "device": "gpu-1"}]}})
    out = run([slice_("s", gpus())], [dclass()], [claim("c", req(mode="All"))], state)
    assert not out.ok


def test_all_mode_with_incomplete_pool_is_an_error():
    out = run([slice_("s", gpus(), count=2)], [dclass()], [claim("c", req(mode="All"))])
    assert (
        out.fatal
        and "asks for all devices, but resource pool gpu.example.com/n1 is currently being updated" in out.reason
    )


def test_missing_class_is_fatal():
    out = run([slice_("s", gpus())], [], [claim("c", req(cls="nope"))])
    assert out.fatal
    assert out.reason == (
        "claim default/c, request gpu: could not retrieve device class nope: "
        'deviceclass.resource.k8s.io "nope" not found'
    )


def test_class_config_and_claim_config():
    cfg = {"opaque": {"driver": DRIVER, "parameters": {"a": 1}}}
    out = run(
        [slice_("s", gpus())],
        [dclass(config=[cfg])],
        [
            claim(
                "c",
                req("a"),
                req("b"),
                config=[
                    {"requests": ["b"], "opaque": {"driver": DRIVER, "parameters": {"b": 2}}},
                    {"opaque": {"driver": DRIVER, "parameters": {"all": 3}}},
                ],
            )
        ],
    )
    config = out.results[0]["devices"]["config"]
    assert config[0] == {"opaque": cfg["opaque"], "source": "FromClass", "requests": ["a", "b"]}
    assert config[1]["source"] == "FromClaim" and config[1]["requests"] == ["b"]
    assert config[2]["source"] == "FromClaim" and "requests" not in config[2]


# -- every reason a device is skipped: the first device is unusable, the second is picked


def _skip(first: dict, *, cls=None, request=None, state=None, rules=(), slices_extra=(), first_slice_kw=None):
    slices = [slice_("s", [first, dev("good", model="h100")], **(first_slice_kw or {})), *slices_extra]
    return run(slices, [cls or dclass()], [claim("c", request or req())], state, rules=rules)


def test_skip_class_selector_false():
    out = _skip(dev("bad", model="a100"), cls=dclass("gpu", f'{attr("model")} == "h100"'))
    assert picked(out) == ["good"]


def test_skip_request_selector_false():
    out = _skip(dev("bad", model="a100"), request=req("gpu", "gpu", 1, f'{attr("model")} != "a100"'))
    assert picked(out) == ["good"]


def test_skip_already_allocated():
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "x", "driver": DRIVER, "pool": "n1", "device": "bad"}]}})
    assert picked(_skip(dev("bad"), state=state)) == ["good"]


def test_skip_tainted_untolerated():
    bad = dev("bad")
    bad["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    assert picked(_skip(bad)) == ["good"]


def test_skip_wrong_node_per_device_selection():
    bad = dev("bad")
    bad["nodeName"] = "other"
    good = dev("good")
    good["nodeName"] = "n1"
    out = run(
        [slice_("s", [bad, good], node_name=None, pool="p", perDeviceNodeSelection=True)],
        [dclass()],
        [claim("c", req())],
    )
    assert picked(out) == ["good"]


def test_skip_counters_exhausted():
    counters = [{"name": "mem", "counters": {"memory": {"value": "10Gi"}}}]
    bad = dev("bad")
    bad["consumesCounters"] = [{"counterSet": "mem", "counters": {"memory": {"value": "20Gi"}}}]
    assert picked(_skip(bad, first_slice_kw={"sharedCounters": counters})) == ["good"]


def test_skip_capacity_exhausted():
    bad = dev("bad")
    bad["capacity"] = {"memory": {"value": "10Gi"}}
    good = dev("good")
    good["capacity"] = {"memory": {"value": "40Gi"}}
    out = run([slice_("s", [bad, good])], [dclass()], [claim("c", req(capacity={"requests": {"memory": "20Gi"}}))])
    assert picked(out) == ["good"]


def test_skip_incomplete_pool_and_old_generation():
    incomplete = slice_("a", [dev("bad")], pool="p-incomplete", count=2)
    old = slice_("b1", [dev("old")], pool="p-gen", generation=1)
    new = slice_("b2", [dev("good")], pool="p-gen", generation=2)
    out = run([incomplete, old, new], [dclass()], [claim("c", req(count=1))])
    assert picked(out) == ["good"]
    out = run([incomplete, old, new], [dclass()], [claim("c", req(count=2))])
    assert not out.ok


def test_skip_wrong_node_slice():
    out = run(
        [slice_("s1", [dev("bad")], node_name="other"), slice_("s2", [dev("good")])], [dclass()], [claim("c", req())]
    )
    assert picked(out) == ["good"]


def test_skip_binding_conditions_preferred_last():
    bad = dev("bad")
    bad["bindingConditions"] = ["dra.example.com/attached"]
    assert picked(_skip(bad)) == ["good"]


def test_cel_runtime_error_is_reported():
    out = _skip(dev("bad"), request=req("gpu", "gpu", 1, f'{attr("model")} == "h100"'))
    assert out.fatal and out.cel_errors == ["claim default/c: selector #0: CEL runtime error: no such key: model"]


def test_cel_runtime_error_in_class():
    out = _skip(dev("bad"), cls=dclass("gpu", f'{attr("model")} == "h100"'))
    assert out.cel_errors == ["class gpu: selector #0: CEL runtime error: no such key: model"]


def test_cel_error_on_device_in_use_is_not_reached():
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "x", "driver": DRIVER, "pool": "n1", "device": "bad"}]}})
    out = _skip(dev("bad"), request=req("gpu", "gpu", 1, f'{attr("model")} == "h100"'), state=state)
    assert picked(out) == ["good"]


def test_admin_access_uses_allocated_device_and_does_not_consume():
    state = AllocatedState()
    state.add({"devices": {"results": [{"request": "x", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}]}})
    out = run([slice_("s", gpus(1))], [dclass()], [claim("c", req(adminAccess=True))], state)
    assert out.results[0]["devices"]["results"][0]["adminAccess"] is True
    assert picked(out) == ["gpu-0"]
    state.add(out.results[0])  # admin results do not take the device
    assert state.devices == {(DRIVER, "n1", "gpu-0"): 1}


@pytest.mark.parametrize("count", [1, 2])
def test_admin_access_same_device_not_twice_in_one_claim(count):
    out = run([slice_("s", gpus(1))], [dclass()], [claim("c", req(count=count, adminAccess=True))])
    assert out.ok is (count == 1)


def test_cel_runtime_error_names_the_claim_that_reached_it():
    sel = f'{attr("model")} == "h100"'
    out = run(
        [slice_("s", [dev("good", model="h100"), dev("bad")])],
        [dclass()],
        [claim("c1", req("gpu", "gpu", 1, sel)), claim("c2", req("gpu", "gpu", 1, sel))],
    )
    assert out.cel_errors == ["claim default/c2: selector #0: CEL runtime error: no such key: model"]
