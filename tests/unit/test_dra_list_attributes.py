"""DRAListTypeAttributes (KEP-5491, alpha in v1.36, off by default): list-valued device
attributes (``ints``, ``bools``, ``strings``, ``versions``) as CEL lists in selectors, and
matchAttribute/distinctAttribute comparing sets; with the gate off a list value is
"unsupported attribute value", which stops scheduling, as upstream. The allocator cases of
upstream's table are in test_allocator_upstream_table.py."""

from __future__ import annotations

import pytest

from mockkube.dra import cel, constraints
from mockkube.dra.pools import build_pool
from tests.unit._sched_helpers import DRIVER, env

PCIE = {"pcieRoots": {"strings": ["pci0000:00", "pci0000:01"]}}


def _device(**attrs) -> dict:
    return {"name": "d", "attributes": attrs}


def test_cel_sees_lists_when_the_gate_is_on():
    env_ = cel.device_env(
        DRIVER,
        _device(
            numa={"ints": [0, 1]},
            flags={"bools": [True]},
            fw={"versions": ["1.2.3", "2.0.0"]},
            **PCIE,
        ),
        list_attrs=True,
    )
    match = lambda expr: cel.compile_expression(expr).matches(env_)  # noqa: E731
    assert match(f'"pci0000:01" in device.attributes["{DRIVER}"].pcieRoots')
    assert match(f'device.attributes["{DRIVER}"].numa.exists(n, n == 1)')
    assert match(f'device.attributes["{DRIVER}"].flags[0]')
    assert match(f'device.attributes["{DRIVER}"].fw.exists(v, v.isGreaterThan(semver("1.9.0")))')
    assert not match(f'size(device.attributes["{DRIVER}"].numa) == 3')


def test_cel_rejects_lists_when_the_gate_is_off():
    with pytest.raises(cel.CELError, match="attribute pcieRoots: unsupported attribute value"):
        cel.device_env(DRIVER, _device(**PCIE))
    with pytest.raises(cel.CELError, match="parse semantic version: nope"):
        cel.device_env(DRIVER, _device(fw={"versions": ["1.0.0", "nope"]}), list_attrs=True)


def test_as_set():
    assert constraints.as_set({"string": "a"}) == {("string", "a")}
    assert constraints.as_set({"strings": ["a", "b", "a"]}) == {("string", "a"), ("string", "b")}
    assert constraints.as_set({"versions": ["1.0.0"]}) == {("version", "1.0.0")}
    assert constraints.as_set({}) is None
    # a string and a version never meet, nor an int and a bool
    assert constraints.as_set({"string": "1.0.0"}).isdisjoint(constraints.as_set({"version": "1.0.0"}))
    assert constraints.as_set({"int": 1}).isdisjoint(constraints.as_set({"bool": True}))


def _devices(*values: dict):
    slice_ = {
        "metadata": {"name": "s"},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n1",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"d{i}", "attributes": {"a": v}} for i, v in enumerate(values)],
        },
    }
    return build_pool(DRIVER, "p", [slice_], list_attrs=True).devices


def test_match_keeps_the_running_intersection_across_removals():
    d0, d1, d2 = _devices({"strings": ["x", "y", "z"]}, {"strings": ["y", "z"]}, {"strings": ["z", "w"]})
    m = constraints.MatchAttribute(None, f"{DRIVER}/a")
    assert m.add("r", "", d0) and m.add("r", "", d1) and m.add("r", "", d2)
    assert m.sets[-1][2] == {("string", "z")}
    # removing a device other than the last one added recomputes what follows
    m.remove("r", "", d1)
    assert m.sets[-1][2] == {("string", "z")} and len(m.sets) == 2
    m.remove("r", "", d2)
    assert m.sets[-1][2] == {("string", "x"), ("string", "y"), ("string", "z")}
    (d3,) = _devices({"string": "w"})
    assert not m.add("r", "", d3)


def test_distinct_is_pairwise_disjoint():
    d0, d1, d2 = _devices({"ints": [0, 1]}, {"ints": [2]}, {"int": 1})
    d = constraints.DistinctAttribute(None, f"{DRIVER}/a")
    assert d.add("r", "", d0) and d.add("r", "", d1)
    assert not d.add("r", "", d2)  # 1 is in d0's set
    d.remove("r", "", d0)
    assert d.add("r", "", d2)


def _slices(e) -> None:
    e.node("n1")
    e.slice(
        "n1",
        [
            {"name": "gpu-0", "attributes": {"pcieRoots": {"strings": ["pci0", "pci1"]}}},
            {"name": "gpu-1", "attributes": {"pcieRoots": {"strings": ["pci1"]}}},
            {"name": "gpu-2", "attributes": {"pcieRoots": {"strings": ["pci2"]}}},
        ],
    )
    e.device_class()
    e.template(
        "t",
        [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}],
        constraints=[{"matchAttribute": f"{DRIVER}/pcieRoots"}],
    )
    e.pod("p", template="t")


async def test_scheduler_with_the_gate_on():
    async with env(server_kw={"feature_gates": {"DRAListTypeAttributes": True}}) as e:
        _slices(e)
        await e.wait(lambda: e.node_of("p"))
        assert sorted(e.devices_of("p")) == ["gpu-0", "gpu-1"]  # they share pci1


async def test_scheduler_with_the_gate_off_reports_the_list_value(tmp_path):
    """Slices written while the gate was on stay stored when it is turned off (the API
    server drops list values only from slices that did not have them); the scheduler then
    meets them."""
    db = {"db_url": f"sqlite:///{tmp_path}/db.sqlite"}
    async with env(scheduler=False, server_kw={**db, "feature_gates": {"DRAListTypeAttributes": True}}) as e:
        _slices(e)
    async with env(server_kw=db) as e:
        await e.wait(lambda: e.events("p"))
        assert e.node_of("p") is None
        assert "unsupported attribute value" in e.events("p")[0]["message"]
