"""Cluster profiles: what nodes a simulated cluster has, their capacity, and which DRA
drivers run where with which devices (docs/profiles.md).

A profile is YAML validated against ``profile.schema.json``; an error names the line of
the offending value so a user can fix the file without guessing. ``expand`` turns node
groups (``count``) into one ``NodeSpec`` per node. All pure: no I/O beyond reading a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from mockkube.machinery.durations import parse_duration  # noqa: F401  (profiles use it)

SCHEMA_PATH = Path(__file__).with_name("profile.schema.json")

DEFAULT_CAPACITY = {
    "cpu": "8",
    "memory": "32Gi",
    "pods": "110",
    "ephemeral-storage": "100Gi",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
}

DEMO_PROFILE: dict = {
    "apiVersion": "mockkube.io/v1alpha1",
    "kind": "ClusterProfile",
    "name": "demo",
    "controlPlane": True,
    # the cpu.example.com driver publishes KEP-5517 node-allocatable mappings (alpha in v1.36)
    "featureGates": {"DRANodeAllocatableResources": True},
    "nodes": [
        {
            "name": "gpu-node",
            "count": 2,
            "labels": {"node-role.kubernetes.io/worker": "", "example.com/accelerator": "gpu"},
            "capacity": {"cpu": "32", "memory": "128Gi"},
            "drivers": {
                "gpu.example.com": {"count": 4, "model": "LATEST-GPU-MODEL", "memory": "80Gi", "partitions": True}
            },
        },
        {
            "name": "fpga-node",
            "labels": {"node-role.kubernetes.io/worker": "", "example.com/fabric": "fabric-a"},
            "capacity": {"cpu": "16", "memory": "64Gi"},
            "extendedResources": {"example.com/nic": "2"},
            "drivers": {"fpga.example.com": {}},
        },
        {
            "name": "cpu-node",
            "labels": {"node-role.kubernetes.io/worker": ""},
            "capacity": {"cpu": "64", "memory": "256Gi"},
            "drivers": {"cpu.example.com": {"shape": "cores", "sockets": 2, "coresPerSocket": 8}},
        },
    ],
    "fabric": [
        {
            "driver": "fpga.example.com",
            "pool": "fabric-a",
            "devices": 4,
            "nodeSelector": {"example.com/fabric": "fabric-a"},
        },
    ],
    "drivers": {"fpga.example.com": {"attachDelay": "1s", "failureRate": 0, "seed": 1}},
}


class ProfileError(ValueError):
    """A profile that does not validate; the message names the line and the field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid cluster profile:\n" + "\n".join(f"  {p}" for p in problems))
        self.problems = problems


@dataclass
class NodeSpec:
    """One node as the kubelet simulator registers it."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    taints: list[dict] = field(default_factory=list)
    unschedulable: bool = False
    capacity: dict[str, str] = field(default_factory=dict)
    allocatable: dict[str, str] = field(default_factory=dict)
    drivers: dict[str, dict] = field(default_factory=dict)
    index: int = 0  # position in the cluster, for addresses
    runtime: str = ""  # its kubelet's container runtime ("" = the cluster's kubelet.runtime)


@dataclass
class Profile:
    name: str
    nodes: list[NodeSpec]
    fabric: list[dict]
    driver_settings: dict[str, dict]
    device_classes: bool = True
    scheduler: dict = field(default_factory=dict)
    kubelet: dict = field(default_factory=dict)  # rootDir, pluginWipingDelay, healthTaintEffect
    control_plane: bool = False  # kind's control plane and kube-system add-ons (mockkube/kubelet/controlplane.py)
    # --feature-gates and --runtime-config as the profile sets them (mockkube/config/features.py)
    feature_gates: dict = field(default_factory=dict)
    runtime_config: dict = field(default_factory=dict)

    def drivers(self) -> list[str]:
        """Every driver the profile uses, in a stable order."""
        names = {d for n in self.nodes for d in n.drivers} | {f.get("driver", "fpga.example.com") for f in self.fabric}
        return sorted(names)


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


# -- YAML with line numbers ------------------------------------------------------


def _compose(text: str) -> tuple[Any, dict[tuple, int]]:
    """Parse YAML keeping, for every value, the (1-based) line it starts on."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ProfileError([f"{where}not valid YAML: {getattr(e, 'problem', None) or e}"]) from None
    lines: dict[tuple, int] = {}

    def walk(node: yaml.Node, path: tuple) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(v, path + (k.value,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    if root is not None:
        walk(root, ())
    data = yaml.safe_load(text)
    return data, lines


def _where(path: tuple, lines: dict[tuple, int]) -> str:
    p = tuple(path)
    while p not in lines and p:
        p = p[:-1]
    return f"line {lines[p]}" if p in lines else "profile"


def _dotted(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def validate(data: Any, lines: dict[tuple, int] | None = None) -> None:
    """Raise ProfileError listing every schema violation with its line."""
    lines = lines or {}
    if not isinstance(data, dict):
        raise ProfileError([f"{_where((), lines)}: a profile is a mapping with `nodes:`"])
    import jsonschema  # only user profiles need it: kept off the server's start-up path

    v = jsonschema.Draft202012Validator(schema())
    problems = []
    for err in sorted(v.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        path = tuple(err.absolute_path)
        problems.append(f"{_where(path, lines)}: {_dotted(path)}: {err.message}")
    names: dict[str, int] = {}
    for i, group in enumerate(data.get("nodes") or []):
        for n in _names(group):
            if n in names:
                problems.append(
                    f"{_where(('nodes', i, 'name'), lines)}: nodes[{i}].name: node {n!r} "
                    f"is already defined by nodes[{names[n]}]"
                )
            names.setdefault(n, i)
    if problems:
        raise ProfileError(problems)


def _names(group: dict) -> list[str]:
    if not isinstance(group, dict) or not isinstance(group.get("name"), str):
        return []
    count = group.get("count")
    if isinstance(count, int) and count >= 1:
        return [f"{group['name']}-{i}" for i in range(count)]
    return [group["name"]]


def load(source: str | Path | dict | None) -> Profile:
    """A profile from a dict, a YAML string, a file path, or None (the demo profile)."""
    if source is None:
        return expand(DEMO_PROFILE)  # built in, and checked against the schema by a unit test
    if isinstance(source, dict):
        data, lines = source, {}
    else:
        text = str(source)
        from_file = isinstance(source, Path) or ("\n" not in text and Path(text).is_file())
        if from_file:
            text = Path(text).read_text()
        data, lines = _compose(text)
        if not from_file and isinstance(data, str) and "\n" not in text.strip():
            # one line that names no file and reads as a plain string: a path that is not
            # there ("a profile is a mapping" would mislead)
            raise ProfileError([f'the path "{text}" does not exist'])
    validate(data, lines)
    return expand(data)


def _qty(v: Any) -> str:
    return str(v)


CONTROL_PLANE_NODE = "mockkube-control-plane"  # kind's <cluster>-control-plane
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"


def control_plane_node(index: int = 0) -> NodeSpec:
    """kind's control-plane node: its role label (kubectl's ROLES column), the
    ``exclude-from-external-load-balancers`` label kubeadm sets, and the NoSchedule taint."""
    name = CONTROL_PLANE_NODE
    return NodeSpec(
        name=name,
        labels={
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            CONTROL_PLANE_LABEL: "",
            "node.kubernetes.io/exclude-from-external-load-balancers": "",
        },
        annotations={"kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock"},
        taints=[{"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"}],
        capacity=dict(DEFAULT_CAPACITY),
        allocatable=dict(DEFAULT_CAPACITY),
        index=index,
    )


def expand(data: dict) -> Profile:
    """Node groups to nodes; defaults for capacity; allocatable defaults to capacity. With
    ``controlPlane: true`` the control-plane node is added (last, so the other nodes keep
    their addresses)."""
    nodes: list[NodeSpec] = []
    control_plane = bool(data.get("controlPlane", False))
    for group in data.get("nodes") or []:
        cap = dict(DEFAULT_CAPACITY)
        cap.update({k: _qty(v) for k, v in (group.get("capacity") or {}).items()})
        cap.update({k: _qty(v) for k, v in (group.get("extendedResources") or {}).items()})
        alloc = dict(cap)
        alloc.update({k: _qty(v) for k, v in (group.get("allocatable") or {}).items()})
        for name in _names(group):
            labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
            labels.update(group.get("labels") or {})
            nodes.append(
                NodeSpec(
                    name=name,
                    labels=labels,
                    annotations=dict(group.get("annotations") or {}),
                    taints=[dict(t) for t in group.get("taints") or []],
                    unschedulable=bool(group.get("unschedulable")),
                    capacity=dict(cap),
                    allocatable=dict(alloc),
                    drivers={k: dict(v or {}) for k, v in (group.get("drivers") or {}).items()},
                    index=len(nodes),
                    runtime=(group.get("kubelet") or {}).get("runtime", ""),
                )
            )
    if control_plane:
        nodes.append(control_plane_node(len(nodes)))
    fabric = [dict(f, driver=f.get("driver", "fpga.example.com")) for f in data.get("fabric") or []]
    return Profile(
        name=data.get("name", "custom"),
        nodes=nodes,
        fabric=fabric,
        driver_settings={k: dict(v or {}) for k, v in (data.get("drivers") or {}).items()},
        device_classes=data.get("deviceClasses", True),
        scheduler=dict(data.get("scheduler") or {}),
        kubelet=dict(data.get("kubelet") or {}),
        control_plane=control_plane,
        feature_gates=dict(data.get("featureGates") or {}),
        runtime_config=dict(data.get("runtimeConfig") or {}),
    )


def load_profile(source: "str | Path | dict | Profile | None", control_plane: bool | None = None) -> Profile:
    """A profile from whatever names one (None: the built-in demo profile); ``control_plane``
    overrides the profile's ``controlPlane`` when not None."""
    profile = source if isinstance(source, Profile) else load(source)
    if control_plane is None or control_plane == profile.control_plane:
        return profile
    nodes = [n for n in profile.nodes if n.name != CONTROL_PLANE_NODE]
    if control_plane:
        nodes.append(control_plane_node(len(nodes)))
    return replace(profile, nodes=nodes, control_plane=control_plane)
