"""Resource pools: gathering ResourceSlices into pools and devices into per-node views.

As upstream's GatherPools: slices are grouped by (driver, pool name) and generation
(`build_pool` builds one generation); which generation a node uses, and whether the pool
is complete there, is decided per node among the slices that concern it (the allocator's
node view). A pool is invalid when a device name repeats, when two of its slices define
the same counter set, or when a device consumes a counter set (or a counter) that the
pool does not define. A device is available on a node
when its slice (or, with perDeviceNodeSelection, the device itself) names the node,
selects it, or is for all nodes. Everything a device needs repeatedly (CEL env, selector
results, taints, fully-qualified attributes, counters, capacity) is computed once here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from mockkube.dra import cel
from mockkube.dra.qty import Quantity, q
from mockkube.dra.taints import BLOCKING_EFFECTS, effective_taints
from mockkube.machinery.selectors import node_selector_matches

DeviceID = tuple[str, str, str]  # (driver, pool, device)


def node_matches(node: dict, node_name: str | None, all_nodes: bool, node_selector: dict | None) -> bool:
    """NodeMatches: nodeName equality, allNodes, or a v1.NodeSelector."""
    if node_name:
        return ((node.get("metadata") or {}).get("name")) == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return node_selector_matches(node_selector, node)
    return False


def qualify(name: str, driver: str) -> str:
    """A QualifiedName with the driver as default domain."""
    return name if "/" in name else f"{driver}/{name}"


@dataclass(eq=False, slots=True)
class DeviceInfo:
    """One device of a pool's newest generation, with cached derived data."""

    id: DeviceID
    device: dict
    slice: dict
    pool: "PoolInfo"
    slice_index: int
    device_index: int
    taints: list[dict] = field(default_factory=list)
    # ("name", n) | ("all", None) | ("selector", sel) | ("none", None)
    target: tuple[str, Any] = ("none", None)
    plain: bool = False  # no blocking taints, counters, sharing or binding conditions
    list_attrs: bool = False  # DRAListTypeAttributes: list values are CEL lists (else an error)
    _env: dict | None = None
    _env_error: str | None = None
    _cel: dict = field(default_factory=dict)
    _attrs: dict | None = None
    _capacity: dict | None = None

    @property
    def driver(self) -> str:
        return self.id[0]

    @property
    def name(self) -> str:
        return self.id[2]

    @property
    def binding_conditions(self) -> list[str]:
        return self.device.get("bindingConditions") or []

    @property
    def binding_failure_conditions(self) -> list[str]:
        return self.device.get("bindingFailureConditions") or []

    @property
    def binds_to_node(self) -> bool:
        return bool(self.device.get("bindsToNode"))

    @property
    def allow_multiple(self) -> bool:
        return bool(self.device.get("allowMultipleAllocations"))

    @property
    def consumes_counters(self) -> list[dict]:
        return self.device.get("consumesCounters") or []

    def on_node(self, node: dict) -> bool:
        kind, value = self.target
        if kind == "all":
            return True
        if kind == "name":
            return (node.get("metadata") or {}).get("name") == value
        if kind == "selector":
            return node_selector_matches(value, node)
        return False

    def matches(self, expression: str) -> bool:
        """CEL selector result, cached per expression; raises cel.CELError."""
        hit = self._cel.get(expression)
        if hit is not None:
            if isinstance(hit, cel.CELError):
                raise hit
            return hit
        try:
            if self._env is None:
                if self._env_error is not None:
                    raise cel.CELError(self._env_error)
                try:
                    self._env = cel.device_env(self.driver, self.device, self.list_attrs)
                except cel.CELError as exc:
                    self._env_error = exc.message
                    raise
            result: Any = cel.compile_expression(expression).matches(self._env)
        except cel.CELError as exc:
            result = exc
        self._cel[expression] = result
        if isinstance(result, cel.CELError):
            raise result
        return result

    def attribute(self, fq_name: str) -> dict | None:
        """lookupAttribute: a fully-qualified name, or the driver-domain short name."""
        if self._attrs is None:
            self._attrs = {qualify(k, self.driver): v for k, v in (self.device.get("attributes") or {}).items()}
            # an explicitly qualified entry wins over the implicit one
            for k, v in (self.device.get("attributes") or {}).items():
                if "/" in k:
                    self._attrs[k] = v
        return self._attrs.get(fq_name)

    def capacity(self) -> dict[str, tuple[Quantity, dict | None, str]]:
        """fully-qualified name -> (value, requestPolicy, name as published)."""
        if self._capacity is None:
            out: dict[str, tuple[Quantity, dict | None, str]] = {}
            raw = self.device.get("capacity") or {}
            for k, v in raw.items():
                if "/" not in k:
                    continue
                out[k] = (q((v or {}).get("value", "0")), (v or {}).get("requestPolicy"), k)
            for k, v in raw.items():
                fq = qualify(k, self.driver)
                if fq not in out:
                    out[fq] = (q((v or {}).get("value", "0")), (v or {}).get("requestPolicy"), k)
            self._capacity = out
        return self._capacity


@dataclass(eq=False, slots=True)
class PoolInfo:
    """One generation of a pool (the newest unless asked): its slices, devices and counter
    sets. `complete` and `invalid` are about all of the generation's slices; a node's view
    judges them again among the slices that concern the node (upstream's GatherPools)."""

    driver: str
    name: str
    generation: int = 0
    slice_count: int = 0
    slices: list[dict] = field(default_factory=list)
    complete: bool = False
    invalid: str = ""
    devices: list[DeviceInfo] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    slice_devices: list[list[DeviceInfo]] = field(default_factory=list)  # per slice, in slice order
    dup_names: bool = False  # some device name repeats among the device slices
    counter_invalid: str = ""  # a repeated counter set, or a consumption of an undefined one

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_target(spec: dict) -> tuple[str, Any]:
    if spec.get("nodeName"):
        return ("name", spec["nodeName"])
    if spec.get("allNodes"):
        return ("all", None)
    if spec.get("nodeSelector") is not None:
        return ("selector", spec["nodeSelector"])
    return ("none", None)


def _device_target(device: dict) -> tuple[str, Any]:
    if device.get("nodeName"):
        return ("name", device["nodeName"])
    if device.get("allNodes"):
        return ("all", None)
    if device.get("nodeSelector") is not None:
        return ("selector", device["nodeSelector"])
    return ("none", None)


def slice_generation(slice_: dict) -> int:
    return int(((slice_.get("spec") or {}).get("pool") or {}).get("generation", 0))


def duplicate_device_name(slices: Iterable[list[DeviceInfo]]) -> str:
    """validateDeviceNames: the reason for the first repeated device name, or ""."""
    seen: set[str] = set()
    for devices in slices:
        for d in devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return ""


def _counter_problem(pool: PoolInfo) -> str:
    """getAndValidateCounterSets and validateDeviceCounterConsumption."""
    names: set[str] = set()
    for s in pool.slices:
        for cs in (s.get("spec") or {}).get("sharedCounters") or ():
            if cs.get("name", "") in names:
                return f"duplicate counter set name {cs.get('name', '')}"
            names.add(cs.get("name", ""))
    for d in pool.devices:
        for dc in d.consumes_counters:
            counters = pool.counter_sets.get(dc.get("counterSet", ""))
            if counters is None:
                return f"counter set {dc.get('counterSet', '')} not found"
            for cname in dc.get("counters") or {}:
                if cname not in counters:
                    return f"counter {cname} not found in counter set {dc.get('counterSet', '')}"
    return ""


def devices_for_node(pool: PoolInfo, slice_index: int, node: dict) -> list[DeviceInfo] | None:
    """GatherPools' relevance of a slice selecting nodes (allNodes, nodeSelector,
    perDeviceNodeSelection) for `node`: its devices there, or None if it does not concern
    the node (a per-device slice concerns it when one of its devices does)."""
    spec = pool.slices[slice_index].get("spec") or {}
    devices = pool.slice_devices[slice_index]
    if spec.get("allNodes"):
        return devices
    if spec.get("nodeSelector") is not None:
        return devices if node_selector_matches(spec["nodeSelector"], node) else None
    if spec.get("perDeviceNodeSelection"):
        return [d for d in devices if d.on_node(node)] or None
    return None


def build_pool(
    driver: str,
    name: str,
    slices: Iterable[dict],
    taint_rules: Iterable[dict] = (),
    generation: int | None = None,
    list_attrs: bool = False,
) -> PoolInfo:
    """Build one generation of a pool (default: the newest) from the slices that name it
    (``list_attrs``: the DRAListTypeAttributes feature gate)."""
    slices = list(slices)
    pool = PoolInfo(driver=driver, name=name)
    if not slices:
        return pool
    pool.generation = max(slice_generation(s) for s in slices) if generation is None else generation
    newest = [s for s in slices if slice_generation(s) == pool.generation]
    newest.sort(key=lambda s: (s.get("metadata") or {}).get("name", ""))
    pool.slices = newest
    pool.slice_count = int(((newest[0].get("spec") or {}).get("pool") or {}).get("resourceSliceCount", 1))
    pool.complete = len(newest) == pool.slice_count
    rules = list(taint_rules)
    for si, s in enumerate(newest):
        spec = s.get("spec") or {}
        for cs in spec.get("sharedCounters") or ():
            counters = pool.counter_sets.setdefault(cs.get("name", ""), {})
            for cname, c in (cs.get("counters") or {}).items():
                counters[cname] = q((c or {}).get("value", "0"))
        per_device = bool(spec.get("perDeviceNodeSelection"))
        slice_target = _slice_target(spec)
        pool.slice_devices.append([])
        for di, d in enumerate(spec.get("devices") or ()):
            info = DeviceInfo(
                id=(driver, name, d.get("name", "")),
                device=d,
                slice=s,
                pool=pool,
                slice_index=si,
                device_index=di,
                taints=effective_taints(d, driver, name, rules),
                target=_device_target(d) if per_device else slice_target,
                list_attrs=list_attrs,
            )
            info.plain = not (
                any(t.get("effect") in BLOCKING_EFFECTS for t in info.taints)
                or d.get("consumesCounters")
                or d.get("allowMultipleAllocations")
                or d.get("bindingConditions")
            )
            pool.devices.append(info)
            pool.slice_devices[-1].append(info)
    dup = duplicate_device_name(pool.slice_devices)
    pool.dup_names = bool(dup)
    pool.counter_invalid = _counter_problem(pool)
    pool.invalid = dup or pool.counter_invalid
    return pool
