"""Cluster profile parsing and validation."""

import pytest

from mockkube.config.profile import DEMO_PROFILE, ProfileError, load, parse_duration, validate


def test_demo_profile_passes_the_schema():
    validate(DEMO_PROFILE)  # load(None) skips validation at start-up; this keeps it honest


def test_demo_profile_nodes_and_drivers():
    p = load(None)
    names = [n.name for n in p.nodes]
    assert names == ["gpu-node-0", "gpu-node-1", "fpga-node", "cpu-node", "mockkube-control-plane"]
    assert p.control_plane
    assert p.drivers() == ["cpu.example.com", "fpga.example.com", "gpu.example.com"]
    gpu = p.nodes[0]
    assert gpu.capacity["cpu"] == "32" and gpu.allocatable["memory"] == "128Gi"
    assert gpu.labels["kubernetes.io/hostname"] == "gpu-node-0"
    assert p.nodes[2].capacity["example.com/nic"] == "2"


def test_group_count_expands_and_allocatable_overrides():
    p = load("""
nodes:
- name: big
  count: 3
  capacity: {cpu: 16, memory: 64Gi}
  allocatable: {cpu: 15500m}
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
  drivers:
    gpu.example.com: {count: 8}
""")
    assert [n.name for n in p.nodes] == ["big-0", "big-1", "big-2"]
    assert p.nodes[1].allocatable == dict(p.nodes[1].capacity, cpu="15500m")
    assert p.nodes[2].taints == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert p.nodes[2].drivers == {"gpu.example.com": {"count": 8}}


@pytest.mark.parametrize(
    "text,line,fragment",
    [
        ("nodes:\n- name: a\n  capacity:\n    cpu: lots\n", 4, "nodes[0].capacity.cpu"),
        ("nodes:\n- name: a\n- name: b\n  drivers:\n    tpu.example.com: {}\n", 5, "tpu.example.com"),
        ("nodes:\n- name: a\n  taints:\n  - key: k\n    effect: Sometimes\n", 5, "Sometimes"),
        ("nodes:\n- name: a\n- name: a\n", 3, "already defined"),
        ("nodes:\n- name: a\n  colour: blue\n", 2, "colour"),
        ("nodes: [\n", 2, "not valid YAML"),
    ],
)
def test_bad_profile_names_the_line(text, line, fragment):
    with pytest.raises(ProfileError) as ei:
        load(text)
    msg = str(ei.value)
    assert f"line {line}" in msg, msg
    assert fragment in msg, msg


@pytest.mark.parametrize("value,seconds", [("1s", 1.0), ("250ms", 0.25), ("1m30s", 90.0), (2, 2.0), ("", 0.0)])
def test_parse_duration(value, seconds):
    assert parse_duration(value) == seconds


def test_parse_duration_rejects_garbage():
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_control_plane_node_as_kind_registers_it():
    p = load("nodes: [{name: w}]\ncontrolPlane: true\n")
    w, cp = p.nodes
    assert (w.name, w.index, cp.name, cp.index) == ("w", 0, "mockkube-control-plane", 1)
    assert cp.labels["node-role.kubernetes.io/control-plane"] == ""
    assert cp.taints == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    assert [n.name for n in load("nodes: [{name: w}]\n").nodes] == ["w"]


def test_load_profile_overrides_control_plane():
    from mockkube.config.profile import load_profile

    assert [n.name for n in load_profile(None, False).nodes] == ["gpu-node-0", "gpu-node-1", "fpga-node", "cpu-node"]
    assert not load_profile(None, False).control_plane
    on = load_profile({"nodes": [{"name": "w"}]}, True)
    assert on.control_plane and [n.name for n in on.nodes] == ["w", "mockkube-control-plane"]
    assert load_profile(None, None).control_plane
