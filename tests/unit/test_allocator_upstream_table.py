"""Upstream's allocator test table, case by case.

Ported from kubernetes/kubernetes (a v1.36 development commit, 008b365)
`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go`, the `testcases` table of TestAllocator: same case names, inputs and
expected results or errors. The Go helpers (node, class, request, slice...) are mirrored by
the small builders below so each case reads like its upstream original.

How upstream's expectations map onto mockkube's allocator:

- expected results: one status.allocation per claim; device results compared as a
  multiset (upstream's ConsistOf), node selectors without regard to order, config (only
  where upstream's case has one) exactly, no allocationTimestamp;
- no results and no error: the allocation fails without an error
  (``reason == "cannot allocate all claims"``, not fatal), or there is nothing to allocate;
- an expected error: its text is contained in the failure's reason (a fatal outcome, or
  the non-fatal "invalid resource pools were encountered" that upstream wraps in
  ErrFailedAllocationOnNode).

The cases that turn a feature off run the allocator with the same ``Features`` off (the
cluster's feature gates set them; DRAListTypeAttributes is off unless a case turns it on,
as upstream's gate); the cases for behaviour mockkube does not implement
are expected failures (strict xfail), each saying why.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from mockkube.dra.allocator import REASON_CANNOT_ALLOCATE, Allocator, Features
from mockkube.dra.state import AllocatedState

NOW = "2026-01-01T00:00:00Z"

region1, region2 = "region-1", "region-2"
node1, node2 = "node-1", "node-2"
classA, classB = "class-a", "class-b"
driverA, driverB = "driver-a", "driver-b"
pool1, pool2, pool3, pool4 = "pool-1", "pool-2", "pool-3", "pool-4"
req0, req1, req2, req3 = "req-0", "req-1", "req-2", "req-3"
subReq0, subReq1 = "subReq-0", "subReq-1"
req0SubReq0, req0SubReq1 = "req-0/subReq-0", "req-0/subReq-1"
req1SubReq0, req1SubReq1 = "req-1/subReq-0", "req-1/subReq-1"
req2SubReq0, req2SubReq1 = "req-2/subReq-0", "req-2/subReq-1"
claim0, claim1 = "claim-0", "claim-1"
slice1, slice2, slice3, slice4 = "slice-1", "slice-2", "slice-3", "slice-4"
device0, device1, device2, device3, device4 = "device-0", "device-1", "device-2", "device-3", "device-4"
counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
ALLOCATION_RESULTS_MAX_SIZE = 32

fieldNameKey, regionKey, planetKey, planetValueEarth = "metadata.name", "region", "planet", "earth"
nodeSelectionAll, nodeSelectionPerDevice = "nodeSelectionAll", "nodeSelectionPerDevice"
fromCounters = "fromCounters"

intAttribute = f"{driverA}/numa"
boolAttribute = f"{driverA}/boolAttribute"
stringAttribute = f"{driverA}/stringAttribute"
versionAttribute = f"{driverA}/driverVersion"
nonExistentAttribute = f"{driverA}/NonExistentAttribute"

taintKey, taintValue, taintValue2 = "taint-key", "taint-value", "taint-value-2"
taintNone = {"key": taintKey, "value": taintValue, "effect": "None"}
taintNoSchedule = {"key": taintKey, "value": taintValue, "effect": "NoSchedule"}
taintNoExecute = {"key": taintKey, "value": taintValue2, "effect": "NoExecute"}
tolerationNoSchedule = {"operator": "Exists", "key": taintKey, "effect": "NoSchedule"}
tolerationNoExecute = {"operator": "Equal", "key": taintKey, "value": taintValue2, "effect": "NoExecute"}
tolerationNoScheduleKey1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}

# -- builders mirroring upstream's generators ------------------------------------------


def node(name: str, region: str) -> dict:
    return {"metadata": {"name": name, "labels": {regionKey: region, planetKey: planetValueEarth}}}


def cls(name: str, driver: str, expression: str | None = None) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression or f'device.driver == "{driver}"'}}]},
    }


def class_with_allow_multiple_allocations(name: str, driver: str, multi: bool) -> dict:
    return cls(
        name,
        driver,
        f'device.driver == "{driver}" && device.allowMultipleAllocations == {"true" if multi else "false"}',
    )


def device_configuration(driver: str, attribute: str) -> dict:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def class_with_config(name: str, driver: str, attribute: str) -> dict:
    c = cls(name, driver)
    c["spec"]["config"] = [device_configuration(driver, attribute)]
    return c


def sel(expression: str) -> dict:
    return {"cel": {"expression": expression}}


def mem_at_least(quantity: str) -> dict:
    return sel(f'device.capacity["{driverA}"].memory.compareTo(quantity("{quantity}")) >= 0')


def request(name: str, class_name: str, count: int, *selectors: dict, **exactly: Any) -> dict:
    ex: dict = {"count": count, "allocationMode": "ExactCount", "deviceClassName": class_name}
    if selectors:
        ex["selectors"] = list(selectors)
    ex.update(exactly)
    return {"name": name, "exactly": ex}


def all_request(name: str, class_name: str, *selectors: dict, **exactly: Any) -> dict:
    ex: dict = {"allocationMode": "All", "deviceClassName": class_name}
    if selectors:
        ex["selectors"] = list(selectors)
    ex.update(exactly)
    return {"name": name, "exactly": ex}


def sub_request(
    name: str,
    class_name: str,
    count: int,
    *selectors: dict,
    mode: str = "ExactCount",
    tolerations: list | None = None,
    **extra: Any,
) -> dict:
    s: dict = {"name": name, "count": count, "allocationMode": mode, "deviceClassName": class_name}
    if mode == "All":
        s.pop("count")
    if selectors:
        s["selectors"] = list(selectors)
    if tolerations:
        s["tolerations"] = list(tolerations)
    s.update(extra)
    return s


def prioritized(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests: dict, constraints: list | None = None, config: list | None = None) -> dict:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def claim_with_request(name: str, req: str, class_name: str, *constraints: dict) -> dict:
    return claim(name, request(req, class_name, 1), constraints=list(constraints))


def with_tolerations(c: dict, *tolerations: dict) -> dict:
    for r in c["spec"]["devices"]["requests"]:
        r["exactly"].setdefault("tolerations", []).extend(tolerations)
    return c


def claim_config(requests: list[str] | None, config: dict, source: str | None = None) -> dict:
    out = dict(config)
    if requests is not None:
        out["requests"] = list(requests)
    if source:
        out["source"] = source
    return out


def attrs(**values: Any) -> dict:
    """Upstream's attribute maps: version strings as ("version", "1.0.0")."""
    out = {}
    for k, v in values.items():
        if isinstance(v, tuple):
            out[k] = {v[0]: v[1]}
        elif isinstance(v, bool):
            out[k] = {"bool": v}
        elif isinstance(v, int):
            out[k] = {"int": v}
        else:
            out[k] = {"string": v}
    return out


def device(
    name: str,
    capacity: Any = None,
    attributes: dict | None = None,
    *,
    consumes: list | None = None,
    taints: list | None = None,
    node_selection: Any = None,
    binding: tuple | None = None,
    binds_to_node: bool | None = None,
    multi: bool = False,
    capacity_policy: dict | None = None,
) -> dict:
    d: dict = {"name": name}
    if attributes:
        d["attributes"] = attributes
    if isinstance(capacity, dict):
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if consumes:
        d["consumesCounters"] = consumes
        if capacity == fromCounters:
            d["capacity"] = {
                k: {"value": v} for cc in consumes for k, v in ((n, c["value"]) for n, c in cc["counters"].items())
            }
    if capacity_policy:
        d.setdefault("capacity", {}).update(capacity_policy)
    if taints:
        d["taints"] = list(taints)
    if node_selection is not None:
        if isinstance(node_selection, dict):
            d["nodeSelector"] = node_selection
        elif node_selection == nodeSelectionAll:
            d["allNodes"] = True
        else:
            d["nodeName"] = node_selection
    if binding is not None:
        d["bindingConditions"], d["bindingFailureConditions"] = binding[0], binding[1]
    if binds_to_node is not None:
        d["bindsToNode"] = binds_to_node
    if multi:
        d["allowMultipleAllocations"] = True
    return d


def consumes(counter_set: str, **counters: str) -> dict:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def counter_set(name: str, **counters: str) -> dict:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def resource_pool(name: str, count: int, generation: int = 1) -> dict:
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def _slice(name: str, node_selection: Any, pool: Any, driver: str) -> dict:
    rp = pool if isinstance(pool, dict) else resource_pool(pool, 1)
    spec: dict = {"driver": driver, "pool": dict(rp)}
    if isinstance(node_selection, dict):
        spec["nodeSelector"] = node_selection
    elif node_selection == nodeSelectionAll:
        spec["allNodes"] = True
    elif node_selection == nodeSelectionPerDevice:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = node_selection
    return {"metadata": {"name": name}, "spec": spec}


def slice_with_devices(name: str, node_selection: Any, pool: Any, driver: str, *devices: dict) -> dict:
    s = _slice(name, node_selection, pool, driver)
    s["spec"]["devices"] = list(devices)
    return s


def slice_with_one_device(name: str, node_selection: Any, pool: Any, driver: str) -> dict:
    return slice_with_devices(name, node_selection, pool, driver, device(device1))


def slice_with_multiple_devices(name: str, node_selection: Any, pool: Any, driver: str, count: int) -> dict:
    return slice_with_devices(name, node_selection, pool, driver, *(device(f"device-{i}") for i in range(count)))


def slice_with_counter_sets(name: str, node_selection: Any, pool: Any, driver: str, *sets: dict) -> dict:
    s = _slice(name, node_selection, pool, driver)
    s["spec"]["sharedCounters"] = list(sets)
    return s


def node_label_selector(key: str, *values: str) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_node_selector(name: str) -> dict:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": fieldNameKey, "operator": "In", "values": [name]}]}]}


def result(req: str, driver: str, pool: str, dev: str, admin: bool = False, *tolerations: dict, **extra: Any) -> dict:
    r: dict = {"request": req, "driver": driver, "pool": pool, "device": dev}
    if admin:
        r["adminAccess"] = True
    if tolerations:
        r["tolerations"] = list(tolerations)
    r.update(extra)
    return r


def multiple_results(req: str, driver: str, pool: str, count: int, start: int) -> list[dict]:
    return [result(req, driver, pool, f"device-{i}") for i in range(start, start + count)]


def allocation(selector: dict | None, *results: dict, config: list | None = None, **extra: Any) -> dict:
    """Upstream's allocationResult / allocationResultWithConfig(s) matchers."""
    return {"selector": selector, "results": list(results), "config": config, **extra}


def did(driver: str, pool: str, dev: str) -> tuple[str, str, str]:
    return (driver, pool, dev)


@dataclass
class Case:
    claims: list[dict] = field(default_factory=list)
    classes: list[dict] = field(default_factory=list)
    slices: list[dict] = field(default_factory=list)
    node: dict | None = None
    allocated: list[tuple[str, str, str]] = field(default_factory=list)
    allocated_shares: list[dict] = field(default_factory=list)  # status.allocation results with shareIDs
    expect: list[dict] | None = None  # None: no results (and, without `error`, no error)
    error: str | None = None
    xfail: str | None = None
    features: Features = field(default_factory=Features)  # upstream's case's features (all on unless said)
    list_attrs: bool = False  # the DRAListTypeAttributes feature gate (upstream's case features)


CASES: dict[str, Case] = {}


def case(name: str, **kw: Any) -> None:
    assert name not in CASES, name
    CASES[name] = Case(**kw)


# -- the table ----------------------------------------------------------------------------

case("empty")
case(
    "simple",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "other-node",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverB), slice_with_one_device(slice2, node2, pool2, driverA)],
    node=node(node2, region2),
    expect=[allocation(local_node_selector(node2), result(req0, driverA, pool2, device1))],
)
case(
    "small-and-large",
    claims=[
        claim(claim0, request(req0, classA, 1, mem_at_least("1Gi")), request(req1, classA, 1, mem_at_least("2Gi")))
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, {"memory": "1Gi"}), device(device2, {"memory": "2Gi"})
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req1, driverA, pool1, device2)
        )
    ],
)
case(
    "small-and-large-backtrack-requests",
    claims=[
        claim(claim0, request(req0, classA, 1, mem_at_least("1Gi")), request(req1, classA, 1, mem_at_least("2Gi")))
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}), device(device1, {"memory": "1Gi"})
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req1, driverA, pool1, device2)
        )
    ],
)
case(
    "small-and-large-backtrack-claims",
    claims=[
        claim(claim0, request(req0, classA, 1, mem_at_least("1Gi"))),
        claim(claim1, request(req1, classA, 1, mem_at_least("2Gi"))),
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}), device(device1, {"memory": "1Gi"})
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1)),
        allocation(local_node_selector(node1), result(req1, driverA, pool1, device2)),
    ],
)
case(
    "devices-split-across-different-slices",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA), slice_with_one_device(slice2, node1, pool2, driverA)],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req0, driverA, pool2, device1)
        )
    ],
)
case(
    "obsolete-slice",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    # upstream's two slices share the name "slice-1-obsolete"; mockkube's allocator keys
    # slices by name (as the API does), so the second one is named apart here
    slices=[
        slice_with_devices("slice-1-obsolete", node1, resource_pool(pool1, 2), driverA, device(device1)),
        slice_with_devices(
            "slice-1-obsolete-2", node1, resource_pool(pool1, 2, generation=2), driverA, device(device2)
        ),
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "duplicate-slice",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1)),
        slice_with_devices(slice1 + "-2", node1, resource_pool(pool1, 2), driverA, device(device1)),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "no-slices",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    node=node(node1, region1),
)
case(
    "not-enough-suitable-devices",
    claims=[claim_with_request(claim0, req0, classA), claim_with_request(claim0, req1, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "no-classes",
    claims=[claim_with_request(claim0, req0, classA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="could not retrieve device class class-a",
)
case(
    "unknown-class",
    claims=[claim_with_request(claim0, req0, "unknown-class")],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="could not retrieve device class unknown-class",
)
case(
    "empty-class",
    claims=[claim_with_request(claim0, req0, "")],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="claim claim-0, request req-0: missing device class name (unsupported request type?)",
)
case(
    "no-claims-to-allocate",
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "all-devices-single",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "all-devices-many",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    # upstream names both slices "slice-1" (in two pools); names kept apart here, see obsolete-slice
    slices=[
        slice_with_one_device(slice1, node1, pool1, driverA),
        slice_with_one_device("slice-1b", node1, pool2, driverA),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req0, driverA, pool2, device1)
        )
    ],
)
case(
    "all-devices-of-the-incomplete-pool",
    claims=[claim(claim0, all_request(req0, classA, count=1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1))],
    node=node(node1, region1),
    error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being "
    "updated",
)
case(
    "all-devices-plus-another",
    claims=[claim(claim0, all_request(req0, classA)), claim(claim1, request(req0, classB, 1))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_one_device(slice1, node1, pool1, driverA),
        slice_with_one_device("slice-1b", node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1)),
        allocation(local_node_selector(node1), result(req0, driverB, pool1, device1)),
    ],
)
case(
    "all-devices-plus-another-reversed",
    claims=[claim(claim1, request(req0, classB, 1)), claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_one_device(slice1, node1, pool1, driverA),
        slice_with_one_device("slice-1b", node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverB, pool1, device1)),
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1)),
    ],
)
case(
    "all-devices-many-plus-another",
    claims=[claim(claim0, all_request(req0, classA)), claim(claim1, request(req0, classB, 1))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2)),
        slice_with_one_device("slice-1b", node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req0, driverA, pool1, device2)
        ),
        allocation(local_node_selector(node1), result(req0, driverB, pool1, device1)),
    ],
)
case(
    "all-devices-many-plus-another-reversed",
    claims=[claim(claim1, request(req0, classB, 1)), claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2)),
        slice_with_one_device("slice-1b", node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverB, pool1, device1)),
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req0, driverA, pool1, device2)
        ),
    ],
)
case(
    "all-devices-no-solution",
    claims=[claim(claim1, request(req0, classA, 1)), claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "all-devices-no-solution-reversed",
    claims=[claim(claim0, all_request(req0, classA)), claim(claim1, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "all-devices-slice-without-devices",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "all-devices-no-slices",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    node=node(node1, region1),
)
case(
    "all-devices-some-allocated",
    claims=[claim(claim0, all_request(req0, classA))],
    allocated=[did(driverA, pool1, device1)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
)
case(
    "all-devices-some-allocated-admin-access",
    claims=[claim(claim0, all_request(req0, classA, adminAccess=True))],
    allocated=[did(driverA, pool1, device1)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1, True),
            result(req0, driverA, pool1, device2, True),
        )
    ],
)
case(
    "all-devices-some-allocating-admin-access",
    claims=[claim(claim0, request(req0, classA, 1, adminAccess=True), all_request(req1, classA, adminAccess=True))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
)
case(
    "count-devices-some-allocated-admin-access",
    claims=[claim(claim0, request(req0, classA, 2, adminAccess=True))],
    allocated=[did(driverA, pool1, device1)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1, True),
            result(req0, driverA, pool1, device2, True),
        )
    ],
)
case(
    "separate-claims-share-device-admin-access",
    claims=[
        claim(claim0, request(req0, classA, 1, adminAccess=True)),
        claim(claim1, request(req0, classA, 1, adminAccess=True)),
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1, True)),
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1, True)),
    ],
)
case(
    "admin-access-claims-device-allocating-for-non-admin-access",
    claims=[claim_with_request(claim0, req0, classA), claim(claim1, request(req0, classA, 1, adminAccess=True))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1)),
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1, True)),
    ],
)
case(
    "all-devices-slice-without-devices-prioritized-list",
    claims=[
        claim(claim0, prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classB, 1)))
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA), slice_with_one_device(slice2, node1, pool2, driverB)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverB, pool2, device1))],
)
case(
    "all-devices-no-slices-prioritized-list",
    claims=[
        claim(claim0, prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classB, 1)))
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_one_device(slice2, node1, pool2, driverB)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverB, pool2, device1))],
)
case(
    "all-devices-some-allocated-prioritized-list",
    claims=[
        claim(claim0, prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classB, 1)))
    ],
    allocated=[did(driverA, pool1, device1)],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2)),
        slice_with_one_device(slice2, node1, pool2, driverB),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverB, pool2, device1))],
)
case(
    "network-attached-device",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node_label_selector(regionKey, region1), pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(node_label_selector(regionKey, region1), result(req0, driverA, pool1, device1))],
)
case(
    "unsuccessful-allocation-network-attached-device",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node_label_selector(regionKey, region1), pool1, driverA)],
    node=node(node2, region2),
)
case(
    "many-network-attached-devices",
    claims=[claim(claim0, request(req0, classA, 4))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_one_device(slice1, node_label_selector(regionKey, region1), pool1, driverA),
        slice_with_one_device("slice-1b", nodeSelectionAll, pool2, driverA),
        slice_with_one_device("slice-1c", node_label_selector(planetKey, planetValueEarth), pool3, driverA),
        slice_with_one_device("slice-1d", local_node_selector(node1), pool4, driverA),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": regionKey, "operator": "In", "values": [region1]},
                            {"key": planetKey, "operator": "In", "values": [planetValueEarth]},
                        ],
                        "matchFields": [{"key": fieldNameKey, "operator": "In", "values": [node1]}],
                    }
                ]
            },
            result(req0, driverA, pool1, device1),
            result(req0, driverA, pool2, device1),
            result(req0, driverA, pool3, device1),
            result(req0, driverA, pool4, device1),
        )
    ],
)
case(
    "local-and-network-attached-devices",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_one_device(slice1, node_label_selector(regionKey, region1), pool1, driverA),
        slice_with_one_device("slice-1b", node1, pool2, driverA),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req0, driverA, pool2, device1)
        )
    ],
)
case(
    "several-different-drivers",
    claims=[claim_with_request(claim0, req0, classA), claim_with_request(claim0, req0, classB)],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2)),
        slice_with_one_device("slice-1b", node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0, driverA, pool1, device1)),
        allocation(local_node_selector(node1), result(req0, driverB, pool1, device1)),
    ],
)
case(
    "already-allocated-devices",
    claims=[claim_with_request(claim0, req0, classA)],
    allocated=[did(driverA, pool1, device1), did(driverA, pool1, device2)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
case(
    "admin-access-disabled",
    claims=[claim(claim0, request(req0, classA, 1, adminAccess=True))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
    features=Features(admin_access=False),
)
case(
    "admin-access-enabled",
    claims=[claim(claim0, request(req0, classA, 1, adminAccess=True))],
    allocated=[did(driverA, pool1, device1), did(driverA, pool1, device2)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1, True))],
)
ALL_ATTRS = attrs(
    driverVersion=("version", "1.0.0"), numa=1, stringAttribute="stringAttributeValue", boolAttribute=True
)
case(
    "with-constraint",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            request(req1, classA, 1),
            constraints=[
                {"matchAttribute": intAttribute},
                {"matchAttribute": versionAttribute},
                {"matchAttribute": stringAttribute},
                {"matchAttribute": boolAttribute},
            ],
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, dict(ALL_ATTRS)),
            device(device2, None, dict(ALL_ATTRS)),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req1, driverA, pool1, device2)
        )
    ],
)
case(
    "with-constraint-non-existent-attribute",
    claims=[claim_with_request(claim0, req0, classA, {"matchAttribute": nonExistentAttribute})],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
)
for _name, _attr, _a, _b in (
    ("int", "numa", 1, 2),
    ("string", "stringAttribute", "stringAttributeValue", "stringAttributeValue2"),
    ("bool", "boolAttribute", True, False),
    ("version", "driverVersion", ("version", "1.0.0"), ("version", "2.0.0")),
):
    case(
        f"with-constraint-not-matching-{_name}-attribute",
        claims=[claim(claim0, request(req0, classA, 2), constraints=[{"matchAttribute": f"{driverA}/{_attr}"}])],
        classes=[cls(classA, driverA), cls(classB, driverB)],
        slices=[
            slice_with_devices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, attrs(**{_attr: _a})),
                device(device2, None, attrs(**{_attr: _b})),
            )
        ],
        node=node(node1, region1),
    )
case(
    "with-constraint-not-matching-int-attribute-all-devices",
    claims=[claim(claim0, all_request(req0, classA, count=0), constraints=[{"matchAttribute": intAttribute}])],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, None, attrs(numa=1)), device(device2, None, attrs(numa=2))
        )
    ],
    node=node(node1, region1),
    error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
    "would not be satisfied",
)
case(
    "with-constraint-for-request",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            request(req1, classA, 1),
            constraints=[{"requests": [req0], "matchAttribute": versionAttribute}],
        )
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(driverVersion=("version", "1.0.0"))),
            device(device2, None, attrs(driverVersion=("version", "2.0.0"))),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req1, driverA, pool1, device2)
        )
    ],
)
case(
    "with-constraint-for-request-retry",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            request(req1, classA, 1),
            constraints=[{"requests": [req0], "matchAttribute": versionAttribute}, {"matchAttribute": stringAttribute}],
        )
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(driverVersion=("version", "1.0.0"), stringAttribute="a")),
            device(device2, None, attrs(driverVersion=("version", "2.0.0"), stringAttribute="b")),
            device(device3, None, attrs(driverVersion=("version", "3.0.0"), stringAttribute="b")),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device2), result(req1, driverA, pool1, device3)
        )
    ],
)
case(
    "with-class-device-config",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[class_with_config(classA, driverA, "classAttribute")],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            config=[claim_config([req0], device_configuration(driverA, "classAttribute"), "FromClass")],
        )
    ],
)
case(
    "with-class-device-config-with-multiple-request-and-configs",
    claims=[claim(claim0, request(req0, classA, 1), request(req1, classA, 1), request(req2, classB, 1))],
    classes=[
        class_with_config(classA, driverA, "classAttribute-A"),
        class_with_config(classB, driverB, "classAttribute-B"),
    ],
    slices=[
        slice_with_multiple_devices(slice1, node1, pool1, driverA, 2),
        slice_with_one_device(slice2, node1, pool1, driverB),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device0),
            result(req1, driverA, pool1, device1),
            result(req2, driverB, pool1, device1),
            config=[
                claim_config([req0, req1], device_configuration(driverA, "classAttribute-A"), "FromClass"),
                claim_config([req2], device_configuration(driverB, "classAttribute-B"), "FromClass"),
            ],
        )
    ],
)
case(
    "claim-with-device-config",
    claims=[claim(claim0, request(req0, classA, 1), config=[device_configuration(driverA, "deviceAttribute")])],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            config=[claim_config(None, device_configuration(driverA, "deviceAttribute"), "FromClaim")],
        )
    ],
)
case(
    "unknown-selector",
    claims=[claim(claim0, request(req0, classA, 1, {}))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="CEL expression empty (unsupported selector type?)",
)
case(
    "unknown-allocation-mode",
    claims=[claim(claim0, request(req0, classA, 1, allocationMode="future-mode"))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="unsupported count mode future-mode",
)
case(
    "unknown-constraint",
    claims=[claim(claim0, request(req0, classA, 1), constraints=[{}])],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="empty constraint (unsupported constraint type?)",
)
case(
    "invalid-CEL-one-device",
    claims=[claim(claim0, request(req0, classA, 1, sel("noSuchVar")))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="undeclared reference",
)
case(
    "invalid-CEL-one-device-class",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA, "noSuchVar")],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="undeclared reference",
)
case(
    "invalid-CEL-all-devices",
    claims=[claim(claim0, all_request(req0, classA, sel("noSuchVar")))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="undeclared reference",
)
case(
    "too-many-devices-single-request",
    claims=[claim(claim0, request(req0, classA, 500))],
    classes=[cls(classA, driverA)],
    error="exceeds the claim limit",
)
case(
    "many-devices-okay",
    claims=[claim(claim0, request(req0, classA, ALLOCATION_RESULTS_MAX_SIZE))],
    classes=[cls(classA, driverA)],
)
case(
    "too-many-devices-total",
    claims=[claim(claim0, request(req0, classA, ALLOCATION_RESULTS_MAX_SIZE), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_multiple_devices(slice1, node1, pool1, driverA, ALLOCATION_RESULTS_MAX_SIZE + 1)],
    node=node(node1, region1),
    error="exceeds the claim limit",
)
case(
    "all-devices-invalid-CEL",
    claims=[claim(claim0, request(req0, classA, 500))],
    classes=[cls(classA, driverA)],
    error="exceeds the claim limit",
)
case(
    "prioritized-list-first-unavailable",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classB, 1), sub_request(subReq1, classA, 1)))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)
case(
    "prioritized-list-non-available",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classB, 2), sub_request(subReq1, classA, 2)))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA), slice_with_one_device(slice2, node1, pool2, driverB)],
    node=node(node1, region1),
)
case(
    "prioritized-list-device-config",
    claims=[
        claim(
            claim0,
            prioritized(req0, sub_request(subReq0, classA, 1), sub_request(subReq1, classB, 2)),
            config=[
                claim_config([req0SubReq0], device_configuration(driverA, "foo")),
                claim_config([req0SubReq1], device_configuration(driverB, "bar")),
            ],
        )
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_devices(slice1, node1, pool1, driverB, device(device1, None, {}), device(device2, None, {}))],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0SubReq1, driverB, pool1, device1),
            result(req0SubReq1, driverB, pool1, device2),
            config=[claim_config([req0SubReq1], device_configuration(driverB, "bar"), "FromClaim")],
        )
    ],
)
case(
    "prioritized-list-class-config",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classA, 2), sub_request(subReq1, classB, 2)))],
    classes=[class_with_config(classA, driverA, "foo"), class_with_config(classB, driverB, "bar")],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverB, device(device1), device(device2)),
        slice_with_devices(slice2, node1, pool2, driverA, device(device3)),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0SubReq1, driverB, pool1, device1),
            result(req0SubReq1, driverB, pool1, device2),
            config=[claim_config([req0SubReq1], device_configuration(driverB, "bar"), "FromClass")],
        )
    ],
)
case(
    "prioritized-list-subrequests-with-expressions",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1, mem_at_least("1Gi")),
            prioritized(
                req1,
                sub_request(subReq0, classA, 1, mem_at_least("4Gi")),
                sub_request(subReq1, classA, 2, mem_at_least("2Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {"memory": "2Gi"}),
            device(device2, {"memory": "2Gi"}),
            device(device3, {"memory": "1Gi"}),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device3),
            result(req1SubReq1, driverA, pool1, device1),
            result(req1SubReq1, driverA, pool1, device2),
        )
    ],
)
for _case, _names, _slices2, _expected in (
    (
        "prioritized-list-subrequests-with-constraints-ref-parent-request",
        [req0, req1],
        [
            device(device2, {"memory": "2Gi"}, attrs(driverVersion=("version", "2.0.0"))),
            device(device3, {"memory": "1Gi"}, attrs(driverVersion=("version", "1.0.0"))),
        ],
        device3,
    ),
    (
        "prioritized-list-subrequests-with-constraints-ref-sub-request",
        [req0, req1SubReq0],
        [device(device2, {"memory": "2Gi"}, attrs(driverVersion=("version", "2.0.0")))],
        device2,
    ),
):
    case(
        _case,
        claims=[
            claim(
                claim0,
                request(req0, classA, 1, mem_at_least("8Gi")),
                prioritized(
                    req1,
                    sub_request(subReq0, classA, 1, mem_at_least("2Gi")),
                    sub_request(subReq1, classA, 1, mem_at_least("1Gi")),
                ),
                constraints=[{"requests": _names, "matchAttribute": versionAttribute}],
            )
        ],
        classes=[cls(classA, driverA)],
        slices=[
            slice_with_devices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {"memory": "8Gi"}, attrs(driverVersion=("version", "1.0.0"))),
            ),
            slice_with_devices(slice2, node1, pool2, driverA, *_slices2),
        ],
        node=node(node1, region1),
        expect=[
            allocation(
                local_node_selector(node1),
                result(req0, driverA, pool1, device1),
                result(req1SubReq1, driverA, pool2, _expected),
            )
        ],
    )
case(
    "prioritized-list-subrequests-with-allocation-mode-all",
    claims=[
        claim(claim0, prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classA, 1)))
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    allocated=[did(driverA, pool1, device1)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device2))],
)
case(
    "prioritized-list-allocation-mode-all-multiple-requests",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            prioritized(req1, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classA, 1)),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            result(req1SubReq1, driverA, pool1, device2),
        )
    ],
)
case(
    "prioritized-list-disabled",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classA, 1)))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
    features=Features(prioritized_list=False),
)
case(
    "prioritized-list-multi-request",
    claims=[
        claim(
            claim0,
            request(req1, classA, 1, mem_at_least("8Gi")),
            prioritized(
                req0,
                sub_request(subReq0, classA, 1, mem_at_least("8Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})),
        slice_with_devices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {})),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req1, driverA, pool1, device1),
            result(req0SubReq1, driverA, pool2, device2),
        )
    ],
)
case(
    "prioritized-list-with-backtracking",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                sub_request(subReq0, classA, 1, mem_at_least("8Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
            request(req1, classA, 1, mem_at_least("8Gi")),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})),
        slice_with_devices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {})),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0SubReq1, driverA, pool2, device2),
            result(req1, driverA, pool1, device1),
        )
    ],
)
case(
    "prioritized-list-too-many-in-first-subrequest",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classB, 500), sub_request(subReq1, classA, 1)))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)


def counters_slice(name: str, pool: Any, driver: str = driverA, node_selection: Any = node1, *sets: dict) -> dict:
    return slice_with_counter_sets(name, node_selection, pool, driver, *sets)


case(
    "partitionable-devices-single-device",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, consumes=[consumes(counterSet1, memory="4Gi")]),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
THREE_PARTS = [
    device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")]),
    device(device2, fromCounters, consumes=[consumes(counterSet1, memory="6Gi")]),
    device(device3, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")]),
]
case(
    "partitionable-devices-prioritized-list",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            prioritized(
                req1,
                sub_request(subReq0, classA, 1, mem_at_least("6Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, *THREE_PARTS),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            result(req1SubReq1, driverA, pool1, device3),
        )
    ],
)
case(
    "partitionable-devices-multiple-devices",
    claims=[claim(claim0, request(req0, classA, 1), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, *THREE_PARTS),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device1), result(req1, driverA, pool1, device3)
        )
    ],
)
case(
    "partitionable-devices-multiple-capacity-pools",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            prioritized(
                req1,
                sub_request(subReq0, classA, 1, mem_at_least("6Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi"), consumes(counterSet2, cpus="4")]
            ),
            device(
                device2, fromCounters, consumes=[consumes(counterSet1, memory="6Gi"), consumes(counterSet2, cpus="6")]
            ),
            device(
                device3, fromCounters, consumes=[consumes(counterSet1, memory="4Gi"), consumes(counterSet2, cpus="4")]
            ),
        ),
        counters_slice(
            slice2,
            resource_pool(pool1, 2),
            driverA,
            node1,
            counter_set(counterSet1, memory="18Gi"),
            counter_set(counterSet2, cpus="8"),
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            result(req1SubReq1, driverA, pool1, device3),
        )
    ],
)
case(
    "partitionable-devices-multiple-counters",
    claims=[claim(claim0, request(req0, classA, 1), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi", cpus="6"), consumes(counterSet2, cpus="4", memory="2Gi")],
            ),
            device(
                device2,
                fromCounters,
                consumes=[consumes(counterSet1, memory="6Gi", cpus="4"), consumes(counterSet2, cpus="6", memory="6Gi")],
            ),
            device(
                device3,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi", cpus="4"), consumes(counterSet2, cpus="4", memory="4Gi")],
            ),
        ),
        counters_slice(
            slice2,
            resource_pool(pool1, 2),
            driverA,
            node1,
            counter_set(counterSet1, cpus="8", memory="18Gi"),
            counter_set(counterSet2, cpus="12", memory="18Gi"),
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device2), result(req1, driverA, pool1, device3)
        )
    ],
)


def _cpu_mem_parts(*values: tuple[str, str]) -> list[dict]:
    return [
        device(f"device-{i + 1}", fromCounters, consumes=[consumes(counterSet1, cpus=c, memory=m)])
        for i, (c, m) in enumerate(values)
    ]


case(
    "partitionable-devices-multiple-pools",
    claims=[claim(claim0, request(req0, classA, 1), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, resource_pool(pool1, 2), driverA, *_cpu_mem_parts(("6", "4Gi"), ("4", "6Gi"), ("4", "4Gi"))
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, cpus="8", memory="18Gi")
        ),
        slice_with_devices(
            slice3, node1, resource_pool(pool2, 2), driverA, *_cpu_mem_parts(("6", "4Gi"), ("1", "7Gi"), ("1", "7Gi"))
        ),
        counters_slice(
            slice4, resource_pool(pool2, 2), driverA, node1, counter_set(counterSet1, cpus="8", memory="18Gi")
        ),
    ],
    allocated=[did(driverA, pool1, device2), did(driverA, pool1, device3), did(driverA, pool2, device1)],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool2, device2), result(req1, driverA, pool2, device3)
        )
    ],
)
case(
    "partitionable-devices-unused-counters-in-counter-set",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, consumes=[consumes(counterSet1, memory="5Gi")]),
            device(device2, consumes=[consumes(counterSet1, memory="4Gi")]),
            device(device3, consumes=[consumes(counterSet1, memory="4Gi")]),
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi", unused="1Gi")
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1), result(req0, driverA, pool1, device2), result(req0, driverA, pool1, device3)
        )
    ],
)
# upstream's next two cases put a counter-set slice and a device slice into pool-1 with
# resourceSliceCount 1 each: two slices in a pool that says one, so the pool is
# incomplete and nothing is allocated, whatever the counters (upstream's expectation too)
for _case, _big in (
    ("partitionable-devices-no-capacity-available", "16Gi"),
    ("partitionable-devices-overallocated-capacity-pool", "20Gi"),
):
    case(
        _case,
        claims=[claim(claim0, request(req0, classA, 1))],
        classes=[cls(classA, driverA)],
        slices=[
            slice_with_devices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")]),
                device(device2, fromCounters, consumes=[consumes(counterSet1, memory=_big)]),
            ),
            counters_slice(slice2, pool1, driverA, node1, counter_set(counterSet1, memory="18Gi")),
        ],
        allocated=[did(driverA, pool1, device2)],
        node=node(node1, region1),
    )
case(
    "partitionable-devices-disabled-device-consumes-counters",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, consumes=[consumes(counterSet1, memory="4Gi")])
        ),
        counters_slice(slice2, pool1, driverA, node1, counter_set(counterSet1, memory="18Gi")),
    ],
    # passes with the feature on too: two slices in a pool of resourceSliceCount 1 make it incomplete
    node=node(node1, region1),
)
case(
    "partitionable-devices-disabled-other-device-do-not-consume-counters",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, consumes=[consumes(counterSet1, memory="4Gi")]),
            device(device2),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="18Gi")),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device2))],
    features=Features(partitionable_devices=False),
)
case(
    "partitionable-devices-disabled-per-device-node-selection",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, nodeSelectionPerDevice, pool1, driverA, device(device2, node_selection=node1))],
    node=node(node1, region1),
    features=Features(partitionable_devices=False),
)
case(
    "partitionable-devices-per-device-node-selection-nodename",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                sub_request(subReq0, classA, 1, mem_at_least("6Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            nodeSelectionPerDevice,
            resource_pool(pool1, 2),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], node_selection=node1),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="6Gi")], node_selection=node2),
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, nodeSelectionPerDevice, counter_set(counterSet1, memory="18Gi")
        ),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)
case(
    "partitionable-devices-per-device-node-selection-node-selector",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            nodeSelectionPerDevice,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                node_selection=node_label_selector(regionKey, region1),
            ),
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, nodeSelectionPerDevice, counter_set(counterSet1, memory="18Gi")
        ),
    ],
    node=node(node1, region1),
    expect=[allocation(node_label_selector(regionKey, region1), result(req0, driverA, pool1, device1))],
)
case(
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
    claims=[claim(claim0, request(req0, classA, 3), request(req1, classB, 3))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_devices(
            slice1,
            nodeSelectionPerDevice,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                node_selection=node_label_selector(regionKey, region1),
            ),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], node_selection=node1),
            device(
                device3, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], node_selection=nodeSelectionAll
            ),
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, nodeSelectionPerDevice, counter_set(counterSet1, memory="18Gi")
        ),
        slice_with_devices(
            slice3,
            node1,
            resource_pool(pool2, 2),
            driverB,
            *(
                device(d, fromCounters, consumes=[consumes(counterSet2, memory="4Gi")])
                for d in (device1, device2, device3)
            ),
        ),
        counters_slice(slice4, resource_pool(pool2, 2), driverB, node1, counter_set(counterSet2, memory="12Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            *(result(req0, driverA, pool1, d) for d in (device1, device2, device3)),
            *(result(req1, driverB, pool2, d) for d in (device1, device2, device3)),
        )
    ],
)
case(
    "tainted-two-devices",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, taints=[taintNoSchedule]),
            device(device2, taints=[taintNoExecute]),
        )
    ],
    node=node(node1, region1),
)
case(
    "tainted-one-device-two-taints",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))
    ],
    node=node(node1, region1),
)
case(
    "tainted-two-devices-tolerated",
    claims=[with_tolerations(claim_with_request(claim0, req0, classA), tolerationNoExecute)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, taints=[taintNoSchedule]),
            device(device2, taints=[taintNoExecute]),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device2, False, tolerationNoExecute))],
)
case(
    "tainted-two-devices-prioritized-list-tolerated",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                sub_request(subReq0, classA, 1),
                sub_request(subReq1, classA, 1, tolerations=[tolerationNoExecute]),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, taints=[taintNoSchedule]),
            device(device2, taints=[taintNoExecute]),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device2, False, tolerationNoExecute))
    ],
)
case(
    "tainted-no-effect",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNone]))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "tainted-one-device-two-taints-both-tolerated",
    claims=[with_tolerations(claim_with_request(claim0, req0, classA), tolerationNoSchedule, tolerationNoExecute)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1, False, tolerationNoSchedule, tolerationNoExecute),
        )
    ],
)
case(
    "tainted-disabled",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule, taintNoExecute]))
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
    features=Features(device_taints=False),
)
case(
    "tainted-prioritized-list",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classB, 1), sub_request(subReq1, classA, 1)))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
)
case(
    "tainted-prioritized-list-disabled",
    claims=[claim(claim0, prioritized(req0, sub_request(subReq0, classB, 1), sub_request(subReq1, classA, 1)))],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
    features=Features(device_taints=False),
)
case(
    "tainted-admin-access",
    claims=[claim(claim0, request(req0, classA, 1, adminAccess=True))],
    allocated=[did(driverA, pool1, device1), did(driverA, pool1, device2)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
)
case(
    "tainted-admin-access-disabled",
    claims=[claim(claim0, request(req0, classA, 1, adminAccess=True))],
    allocated=[did(driverA, pool1, device1), did(driverA, pool1, device2)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1, True))],
    features=Features(device_taints=False),
)
case(
    "tainted-all-devices-single",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
)
case(
    "tainted-all-devices-single-disabled",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, taints=[taintNoSchedule]))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
    features=Features(device_taints=False),
)
case(
    "prioritized-list-allocation-mode-all",
    claims=[
        claim(claim0, prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classA, 1)))
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2))],
    allocated=[did(driverA, pool1, device2)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)
GEN_V6 = sel(f'device.attributes["{driverA}"].generation == "v6"')
GEN_V5 = sel(f'device.attributes["{driverA}"].generation == "v5"')
V5_V6_ALL = prioritized(
    req0, sub_request(subReq0, classA, 0, GEN_V6, mode="All"), sub_request(subReq1, classA, 0, GEN_V5, mode="All")
)
case(
    "prioritized-list-allocation-mode-all-with-selectors",
    claims=[claim(claim0, V5_V6_ALL)],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, None, attrs(generation="v5")))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)
case(
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
    claims=[claim(claim0, V5_V6_ALL)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, None, attrs(generation="v5"))),
        slice_with_devices(slice2, node1, pool2, driverA, device(device1, None, attrs(generation="v5"))),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0SubReq1, driverA, pool1, device1),
            result(req0SubReq1, driverA, pool2, device1),
        )
    ],
)
case(
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
    claims=[claim(claim0, V5_V6_ALL)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, None, attrs(generation="v5"))),
        slice_with_devices(
            slice2,
            node2,
            pool2,
            driverA,
            device(device1, None, attrs(generation="v5")),
            device(device2, None, attrs(generation="v6")),
        ),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device1))],
)
case(
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
    claims=[claim(claim0, V5_V6_ALL)],
    classes=[cls(classA, driverA, f'device.driver == "{driverA}" && device.attributes["{driverA}"].selected')],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(generation="v6", selected=False)),
            device(device2, None, attrs(generation="v5", selected=False)),
            device(device3, None, attrs(generation="v5", selected=True)),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device3))],
)
case(
    "max-number-devices",
    claims=[claim(claim0, request(req0, classA, ALLOCATION_RESULTS_MAX_SIZE))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_multiple_devices(slice1, node1, pool1, driverA, ALLOCATION_RESULTS_MAX_SIZE)],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), *multiple_results(req0, driverA, pool1, ALLOCATION_RESULTS_MAX_SIZE, 0))
    ],
)
case(
    "partitionable-devices-with-attribute-selector",
    claims=[
        claim(
            claim0, request(req0, classA, 2), request(req1, classA, 1, sel(f'device.attributes["{driverA}"].special'))
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                None,
                attrs(special=True),
                consumes=[consumes(counterSet1, cpu1="1"), consumes(counterSet2, mem="10Gi")],
            ),
            device(
                device2,
                None,
                attrs(special=False),
                consumes=[consumes(counterSet1, cpu2="1"), consumes(counterSet2, mem="10Gi")],
            ),
            device(
                device3,
                None,
                attrs(special=False),
                consumes=[consumes(counterSet1, cpu3="1"), consumes(counterSet2, mem="10Gi")],
            ),
        ),
        counters_slice(
            slice2,
            resource_pool(pool1, 2),
            driverA,
            node1,
            counter_set(counterSet1, cpu1="1", cpu2="1", cpu3="1"),
            counter_set(counterSet2, mem="30Gi"),
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device2),
            result(req0, driverA, pool1, device3),
            result(req1, driverA, pool1, device1),
        )
    ],
)
case(
    "prioritized-list-max-allocation-limit-request",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                sub_request(subReq0, classA, ALLOCATION_RESULTS_MAX_SIZE),
                sub_request(subReq1, classA, ALLOCATION_RESULTS_MAX_SIZE // 2),
            ),
            prioritized(
                req1,
                sub_request(subReq0, classA, ALLOCATION_RESULTS_MAX_SIZE),
                sub_request(subReq1, classA, ALLOCATION_RESULTS_MAX_SIZE // 2),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_multiple_devices(slice1, node1, pool1, driverA, ALLOCATION_RESULTS_MAX_SIZE * 2)],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            *multiple_results(req0SubReq1, driverA, pool1, ALLOCATION_RESULTS_MAX_SIZE // 2, 0),
            *multiple_results(
                req1SubReq1, driverA, pool1, ALLOCATION_RESULTS_MAX_SIZE // 2, ALLOCATION_RESULTS_MAX_SIZE // 2
            ),
        )
    ],
)
case(
    "prioritized-list-max-allocation-allocation-mode-all",
    claims=[
        claim(
            claim0,
            prioritized(req0, sub_request(subReq0, classA, 0, mode="All"), sub_request(subReq1, classA, 2)),
            request(req1, classB, 2),
        )
    ],
    classes=[cls(classA, driverA), cls(classB, driverB)],
    slices=[
        slice_with_multiple_devices(slice1, node1, pool1, driverA, ALLOCATION_RESULTS_MAX_SIZE - 1),
        slice_with_multiple_devices(slice2, node1, pool2, driverB, 2),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0SubReq1, driverA, pool1, "device-0"),
            result(req0SubReq1, driverA, pool1, "device-1"),
            result(req1, driverB, pool2, "device-0"),
            result(req1, driverB, pool2, "device-1"),
        )
    ],
)


def bc_result(
    req: str, driver: str, pool: str, dev: str, conditions: list | None, failures: list | None, *tolerations: dict
) -> dict:
    r = result(req, driver, pool, dev, False, *tolerations)
    if conditions is not None:
        r["bindingConditions"] = conditions
    if failures is not None:
        r["bindingFailureConditions"] = failures
    return r


PREPARE = (["IsPrepare"], ["BindingFailed"])
case(
    "device-binding-conditions",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, binding=PREPARE))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), bc_result(req0, driverA, pool1, device1, *PREPARE))],
)
case(
    "binding-conditions-multiple-devices",
    claims=[claim(claim0, request(req0, classA, 2), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, binding=PREPARE),
            device(device2, binding=(["IsPrepare2"], ["BindingFailed2"])),
            device(device3, binding=(["IsPrepare3"], ["BindingFailed3"])),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            bc_result(req0, driverA, pool1, device1, *PREPARE),
            bc_result(req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]),
            bc_result(req1, driverA, pool1, device3, ["IsPrepare3"], ["BindingFailed3"]),
        )
    ],
)
case(
    "binding-conditions-with-and-without",
    claims=[claim(claim0, request(req0, classA, 1), request(req1, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1), device(device2, binding=PREPARE))],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device1),
            bc_result(req1, driverA, pool1, device2, *PREPARE),
        )
    ],
)
case(
    "binding-conditions-without-feature-gate",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, binding=PREPARE))],
    node=node(node1, region1),
    features=Features(device_binding=False),
)
case(
    "node-restriction",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node_label_selector(planetKey, planetValueEarth),
            pool1,
            driverA,
            device(device1, binds_to_node=True),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "partitionable-devices-with-binding-conditions",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], binding=PREPARE),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), bc_result(req0, driverA, pool1, device1, *PREPARE))],
)
case(
    "partitionable-devices-with-binding-conditions-multiple",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], binding=PREPARE),
            device(
                device2,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                binding=(["IsPrepare2"], ["BindingFailed2"]),
            ),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            bc_result(req0, driverA, pool1, device1, *PREPARE),
            bc_result(req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]),
        )
    ],
)
case(
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions",
    claims=[claim(claim0, request(req0, classA, 3))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="2Gi")], binding=PREPARE),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="2Gi")]),
            device(
                device3,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                binding=(["IsReady"], ["BindingTimeout"]),
            ),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            bc_result(req0, driverA, pool1, device1, *PREPARE),
            result(req0, driverA, pool1, device2),
            bc_result(req0, driverA, pool1, device3, ["IsReady"], ["BindingTimeout"]),
        )
    ],
)
case(
    "partitionable-devices-with-binding-conditions-multi-slices",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice4,
            node1,
            resource_pool(pool1, 4),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")], binding=PREPARE),
        ),
        counters_slice(slice3, resource_pool(pool1, 4), driverA, node1, counter_set(counterSet1, memory="8Gi")),
        slice_with_devices(
            slice2,
            node1,
            resource_pool(pool1, 4),
            driverA,
            device(device2, fromCounters, consumes=[consumes(counterSet2, memory="4Gi")]),
        ),
        counters_slice(slice1, resource_pool(pool1, 4), driverA, node1, counter_set(counterSet2, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req0, driverA, pool1, device2),
            bc_result(req0, driverA, pool1, device1, *PREPARE),
        )
    ],
)
TAINT_KEY1 = {"key": "key1", "value": "value1", "effect": "NoSchedule"}
case(
    "partitionable-devices-with-binding-conditions-and-taints",
    claims=[claim(claim0, request(req0, classA, 2))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(
                device1,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                binding=PREPARE,
                taints=[TAINT_KEY1],
            ),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")]),
        ),
        counters_slice(slice2, pool1, driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
)
case(
    "partitionable-devices-with-binding-conditions-and-taints-tolerated",
    claims=[with_tolerations(claim(claim0, request(req0, classA, 2)), tolerationNoScheduleKey1)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                fromCounters,
                consumes=[consumes(counterSet1, memory="4Gi")],
                binding=PREPARE,
                taints=[TAINT_KEY1],
            ),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="4Gi")]),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            bc_result(req0, driverA, pool1, device1, *PREPARE, tolerationNoScheduleKey1),
            bc_result(req0, driverA, pool1, device2, None, None, tolerationNoScheduleKey1),
        )
    ],
)


def with_capacity(request_: dict, quantity: str | None) -> dict:
    """withCapacityRequest: capacity.requests {capacity-0: quantity}."""
    target = request_.get("exactly", request_)
    target["capacity"] = {"requests": {capacity0: quantity} if quantity is not None else {}}
    return request_


def policy_range(**capacity: str) -> dict:
    """withCapacityRequestPolicyRange: default 2, valid range min 2 step 2 max 4."""
    return {
        k.replace("_", "-"): {
            "value": v,
            "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}},
        }
        for k, v in capacity.items()
    }


def policy_values(default: str, extra: list[str], **capacity: str) -> dict:
    """withCapacityRequestPolicyValidValues: default first, then the additional values."""
    return {
        k.replace("_", "-"): {"value": v, "requestPolicy": {"default": default, "validValues": [default, *extra]}}
        for k, v in capacity.items()
    }


def shared(req: str, driver: str, pool: str, dev: str, consumed: dict | None = None) -> dict:
    """deviceRequestAllocationResult(...).withConsumedCapacity(&fixedShareID, consumed)."""
    r = result(req, driver, pool, dev, shareID=fixedShareID)
    if consumed:
        r["consumedCapacity"] = {k.replace("_", "-"): v for k, v in consumed.items()}
    return r


def in_use_share(dev: str, **consumed: str) -> dict:
    """allocatedCapacityDevices: capacity already consumed from a shared device."""
    return {
        "request": "r",
        "driver": driverA,
        "pool": pool1,
        "device": dev,
        "shareID": "in-use",
        "consumedCapacity": {k.replace("_", "-"): v for k, v in consumed.items()},
    }


MULTI_A = class_with_allow_multiple_allocations(classA, driverA, True)
DEDICATED_A = class_with_allow_multiple_allocations(classA, driverA, False)
case(
    "consumable-capacity-disabled-feature",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
    features=Features(consumable_capacity=False),
)
case(
    "consumable-capacity-disabled-feature-with-prioritized-list",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                with_capacity(sub_request(subReq0, classA, 1), "1"),
                with_capacity(sub_request(subReq1, classA, 1), "1"),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_one_device(slice1, node1, pool1, driverA)],
    node=node(node1, region1),
    error="claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is "
    "disabled",
    features=Features(consumable_capacity=False),
)
case(
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity1: "1"}, multi=True))],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
    claims=[claim(claim0, with_capacity(all_request(req0, classA), "1"))],
    classes=[MULTI_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity1: "1"}, multi=True))],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
    claims=[claim(claim0, request(req0, classA, 1)), claim(claim1, request(req0, classA, 1))],
    classes=[MULTI_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, multi=True))],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1)),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1)),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
    claims=[claim(claim0, request(req0, classA, 1)), claim(claim1, request(req0, classA, 1))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "1"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "1"})),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device2, {capacity0: "1"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
    claims=[claim(claim0, request(req0, classA, 1)), claim(claim1, request(req0, classA, 1))],
    classes=[MULTI_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity0: "2"}, multi=True))],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
    claims=[
        claim(claim0, with_capacity(request(req0, classA, 1), "1")),
        claim(claim1, with_capacity(request(req0, classA, 1), "1")),
    ],
    classes=[MULTI_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity0: "2"}, multi=True))],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "1"})),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "1"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
    claims=[claim(claim0, request(req0, classA, 1)), claim(claim1, request(req0, classA, 1))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="4"))
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"})),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy",
    claims=[claim(claim0, request(req0, classA, 1)), claim(claim1, request(req0, classA, 1))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, multi=True, capacity_policy=policy_values("0", [], capacity_0="1")),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "0"})),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "0"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, multi=True, capacity_policy=policy_values("0", [], capacity_0="1")),
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
    claims=[
        claim(claim0, with_capacity(request(req0, classA, 1), "1")),
        claim(claim1, with_capacity(request(req0, classA, 1), "1")),
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="4"))
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"})),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-with-range-policy-step",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "3"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="4"))
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "4"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "2"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, multi=True, capacity_policy=policy_values("1", ["2"], capacity_0="4")),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "2"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, multi=True, capacity_policy=policy_values("1", ["3"], capacity_0="3")),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "3"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
    claims=[
        claim(claim0, with_capacity(request(req0, classA, 1), "1")),
        claim(claim1, with_capacity(request(req0, classA, 1), "2")),
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="2"))
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "6"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="10"))
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "2"))],
    classes=[MULTI_A],
    allocated_shares=[in_use_share(device1, capacity_0="2")],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="4"))
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "2"))],
    classes=[MULTI_A],
    allocated_shares=[in_use_share(device1, capacity_0="2")],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, multi=True, capacity_policy=policy_range(capacity_0="2")),
            device(device2, multi=True, capacity_policy=policy_range(capacity_0="2")),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device2, {capacity0: "2"}))],
)
case(
    "consumable-capacity-with-multi-allocatable-device-backtrack",
    claims=[
        claim(
            claim0,
            with_capacity(request(req0, classA, 1), "2"),
            with_capacity(request(req1, classA, 1), "2"),
            constraints=[{"matchAttribute": stringAttribute}],
        ),
        claim(claim1, with_capacity(request(req0, classA, 1), "2")),
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(
                device2,
                None,
                attrs(stringAttribute="stringAttributeValue1"),
                multi=True,
                capacity_policy=policy_range(capacity_0="2"),
            ),
            device(
                device1,
                None,
                attrs(stringAttribute="stringAttributeValue2"),
                multi=True,
                capacity_policy=policy_range(capacity_0="4"),
            ),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {capacity0: "2"}),
            shared(req1, driverA, pool1, device1, {capacity0: "2"}),
        ),
        allocation(local_node_selector(node1), shared(req0, driverA, pool1, device2, {capacity0: "2"})),
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-with-subrequest",
    # upstream names both later subrequests subReq-1
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                with_capacity(sub_request(subReq0, classA, 1), "4"),
                with_capacity(sub_request(subReq1, classA, 1), "2"),
                sub_request(subReq1, classA, 1),
            ),
        )
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="2"))
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0SubReq1, driverA, pool1, device1, {capacity0: "2"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "2"))],
    classes=[MULTI_A],
    allocated_shares=[in_use_share(device1, capacity_0="2")],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="2"))
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
    claims=[claim(claim0, with_capacity(all_request(req0, classA), "2"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, {capacity0: "2"}, multi=True), device(device2, multi=True)
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
    claims=[claim(claim0, with_capacity(all_request(req0, classA), "2"))],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "2"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device1, {capacity0: "2"}))],
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"), with_capacity(all_request(req1, classA), "1"))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "2"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {capacity0: "1"}),
            shared(req1, driverA, pool1, device1, {capacity0: "1"}),
            shared(req1, driverA, pool1, device2, {capacity0: "1"}),
        )
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
    claims=[claim(claim0, with_capacity(all_request(req0, classA), "1"))],
    classes=[cls(classA, driverA)],
    allocated_shares=[in_use_share(device1, capacity_0="1")],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "2"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {capacity0: "1"}),
            shared(req0, driverA, pool1, device2, {capacity0: "1"}),
        )
    ],
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"), with_capacity(all_request(req1, classA), "1"))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "1"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
    claims=[claim(claim0, with_capacity(all_request(req0, classA), "1"))],
    classes=[cls(classA, driverA)],
    allocated_shares=[in_use_share(device1, capacity_0="1")],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, {capacity0: "1"}, multi=True),
            device(device2, {capacity0: "1"}, multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), shared(req0, driverA, pool1, device2, {capacity0: "1"}))],
)
case(
    "consumable-capacity-dedicated-device-with-consumable-capacity-request",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[DEDICATED_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity0: "1"}))],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
    claims=[
        claim(claim0, with_capacity(request(req0, classA, 1), "1")),
        claim(claim1, with_capacity(request(req0, classA, 1), "1")),
    ],
    classes=[DEDICATED_A],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, capacity_policy=policy_range(capacity_0="2")))
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[DEDICATED_A],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, {capacity0: "1"}, multi=True))],
    node=node(node1, region1),
    expect=None,
)
case(
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[MULTI_A],
    allocated=[did(driverA, pool1, device1)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, multi=True, capacity_policy=policy_range(capacity_0="2"))
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
    claims=[claim(claim0, with_capacity(request(req0, classA, 1), "1"))],
    classes=[MULTI_A],
    allocated_shares=[in_use_share(device1, capacity_0="1")],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, capacity_policy=policy_range(capacity_0="2")))
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "allow-multiple-allocations-with-partitionable-device",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            prioritized(
                req1,
                sub_request(subReq0, classA, 1, mem_at_least("6Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("4Gi")),
            ),
        )
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            *(
                device(d, fromCounters, consumes=[consumes(counterSet1, memory=m)], multi=True)
                for d, m in ((device1, "4Gi"), (device2, "6Gi"), (device3, "4Gi"))
            ),
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {"memory": "4Gi"}),
            shared(req1SubReq1, driverA, pool1, device3, {"memory": "4Gi"}),
        )
    ],
)


def _cap_part(name: str, c0: str) -> dict:
    d = device(
        name,
        fromCounters,
        consumes=[consumes(counterSet1, **{capacity0: c0}), consumes(counterSet2, **{capacity1: "4"})],
        multi=True,
    )
    d["capacity"].update(policy_range(capacity_1="4"))
    return d


case(
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools",
    claims=[
        claim(
            claim0,
            with_capacity(request(req0, classA, 1), "1"),
            with_capacity(request(req2, classA, 1), "2"),
            prioritized(
                req1,
                with_capacity(
                    sub_request(
                        subReq0,
                        classA,
                        1,
                        sel(f'device.capacity["{driverA}"]["{capacity0}"].compareTo(quantity("4")) >= 0'),
                    ),
                    "1",
                ),
                with_capacity(
                    sub_request(
                        subReq1,
                        classA,
                        1,
                        sel(f'device.capacity["{driverA}"]["{capacity0}"].compareTo(quantity("2")) >= 0'),
                    ),
                    "1",
                ),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            _cap_part(device1, "2"),
            _cap_part(device2, "4"),
            _cap_part(device3, "2"),
        ),
        counters_slice(
            slice2,
            resource_pool(pool1, 2),
            driverA,
            node1,
            counter_set(counterSet1, **{capacity0: "4"}),
            counter_set(counterSet2, **{capacity1: "8"}),
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {capacity0: "1", capacity1: "2"}),
            shared(req2, driverA, pool1, device3, {capacity0: "2", capacity1: "2"}),
            shared(req1SubReq1, driverA, pool1, device1, {capacity0: "1", capacity1: "2"}),
        )
    ],
)
case(
    "with-distinct-constraints",
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            request(req1, classA, 1),
            request(req2, classA, 1),
            request(req3, classA, 1),
            constraints=[
                {"distinctAttribute": boolAttribute, "requests": [req0, req1]},
                {"distinctAttribute": versionAttribute, "requests": [req0, req1, req2]},
                {"distinctAttribute": intAttribute, "requests": [req0, req1, req2, req3]},
            ],
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            *(
                device(d, None, attrs(driverVersion=("version", v), numa=n, boolAttribute=b), multi=True)
                for d, v, n, b in (
                    (device1, "1.0.0", 0, True),
                    (device2, "1.0.1", 1, False),
                    (device3, "1.0.2", 2, True),
                    (device4, "1.0.0", 3, True),
                )
            ),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1),
            shared(req1, driverA, pool1, device2),
            shared(req2, driverA, pool1, device3),
            shared(req3, driverA, pool1, device4),
        )
    ],
)
case(
    "with-distinct-constraints-attribute-not-set",
    claims=[
        claim(claim0, request(req0, classA, 1), constraints=[{"distinctAttribute": boolAttribute, "requests": [req0]}])
    ],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, pool1, driverA, device(device1, multi=True))],
    node=node(node1, region1),
    expect=None,
)
case(
    "with-distinct-constraints-unknown-type-attribute",
    claims=[
        claim(claim0, request(req0, classA, 1), constraints=[{"distinctAttribute": boolAttribute, "requests": [req0]}])
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": {}}, multi=True))
    ],
    node=node(node1, region1),
    error="unsupported attribute value",
)
BOOL_SEL = sel(f'device.attributes["{driverA}"].boolAttribute')
case(
    "with-distinct-constraints-with-subrequests",
    claims=[
        claim(
            claim0,
            *(
                prioritized(r, sub_request(subReq0, classA, 1, BOOL_SEL), sub_request(subReq1, classA, 1))
                for r in (req0, req1, req2)
            ),
            constraints=[{"distinctAttribute": boolAttribute, "requests": [req0, req1]}],
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(boolAttribute=True), multi=True),
            device(device2, None, attrs(boolAttribute=False), multi=True),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0SubReq0, driverA, pool1, device1),
            shared(req1SubReq1, driverA, pool1, device2),
            shared(req2SubReq0, driverA, pool1, device1),
        )
    ],
)
case(
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
    claims=[
        claim(
            claim0,
            with_capacity(request(req0, classA, 1), "1"),
            with_capacity(request(req1, classA, 1), "1"),
            constraints=[{"distinctAttribute": stringAttribute}],
        )
    ],
    classes=[MULTI_A],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(
                device1,
                None,
                attrs(stringAttribute="stringAttributeValue"),
                multi=True,
                capacity_policy=policy_range(capacity_0="2"),
            ),
        )
    ],
    node=node(node1, region1),
    expect=None,
)
case(
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
    claims=[
        claim(
            claim0,
            with_capacity(request(req0, classA, 1), "2"),
            with_capacity(request(req1, classA, 1), "2"),
            constraints=[{"distinctAttribute": stringAttribute}],
        )
    ],
    classes=[MULTI_A],
    # upstream names both slices slice-1
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device1,
                None,
                attrs(stringAttribute="stringAttributeValue1"),
                multi=True,
                capacity_policy=policy_range(capacity_0="4"),
            ),
        ),
        slice_with_devices(
            "slice-1b",
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(
                device2,
                None,
                attrs(stringAttribute="stringAttributeValue2"),
                multi=True,
                capacity_policy=policy_range(capacity_0="4"),
            ),
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            shared(req0, driverA, pool1, device1, {capacity0: "2"}),
            shared(req1, driverA, pool1, device2, {capacity0: "2"}),
        )
    ],
)


def list_attr(kind: str, *values: Any) -> dict:
    return {kind: list(values)}


def _two_or_three(attr: str, *values: dict) -> list[dict]:
    return [device(f"device-{i + 1}", None, {attr: v}) for i, v in enumerate(values)]


# with DRAListTypeAttributes on, as upstream's list-attributes cases (but the -disabled- ones)
# (name, attribute, constraint kind, count, attribute values, expected devices (None: no allocation), xfail)
for _name, _attr, _kind, _count, _values, _want, _xfail in (
    (
        "list-attributes-match-constaint-scalar-string-values",
        "stringAttribute",
        "match",
        2,
        [{"string": "value1"}, {"string": "value1"}],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-match-constaint-list-of-string-values-with-common-elements",
        "stringAttribute",
        "match",
        2,
        [list_attr("strings", "value1", "value2", "value3"), list_attr("strings", "value2", "value3", "value4")],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements",
        "stringAttribute",
        "match",
        3,
        [
            list_attr("strings", "value1", "value2"),
            list_attr("strings", "value2", "value3"),
            list_attr("strings", "value3", "value1"),
        ],
        None,
        None,
    ),
    (
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements",
        "stringAttribute",
        "match",
        2,
        [{"string": "value1"}, list_attr("strings", "value1", "value2")],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements",
        "stringAttribute",
        "match",
        3,
        [{"string": "value1"}, list_attr("strings", "value1", "value2"), list_attr("strings", "value2", "value3")],
        None,
        None,
    ),
    (
        "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements",
        "stringAttribute",
        "match",
        2,
        [{"string": "value1"}, list_attr("strings", "value2", "value3")],
        None,
        None,
    ),
    (
        "list-attributes-match-constaint-list-of-int-values-with-common-elements",
        "numa",
        "match",
        2,
        [list_attr("ints", 0, 1, 2), list_attr("ints", 1, 2, 3)],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-match-constaint-list-of-bool-values-with-common-elements",
        "boolAttribute",
        "match",
        2,
        [list_attr("bools", True, False), list_attr("bools", True)],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-match-constaint-list-of-version-values-with-common-elements",
        "driverVersion",
        "match",
        2,
        [list_attr("versions", "1.0.0", "1.1.0", "2.0.0"), list_attr("versions", "1.1.0", "2.0.0", "2.1.0")],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-distinct-constraint-scalar-string-values-all-distinct",
        "stringAttribute",
        "distinct",
        2,
        [{"string": "value1"}, {"string": "value2"}],
        [device1, device2],
        None,
    ),
    (
        "list-attributes-distinct-constraint-scalar-string-values-not-distinct",
        "stringAttribute",
        "distinct",
        2,
        [{"string": "value1"}, {"string": "value1"}],
        None,
        None,
    ),
    (
        "list-attributes-distinct-constraint-list-of-string-values-all-distinct",
        "stringAttribute",
        "distinct",
        2,
        [
            list_attr("strings", "value1", "value2"),
            list_attr("strings", "value2", "value3"),
            list_attr("strings", "value3", "value4"),
        ],
        [device1, device3],
        None,
    ),
    (
        "list-attributes-distinct-constraint-list-of-string-values-with-common-elements",
        "stringAttribute",
        "distinct",
        2,
        [list_attr("strings", "value1", "value2", "value3"), list_attr("strings", "value2", "value4", "value5")],
        None,
        None,
    ),
    (
        "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct",
        "stringAttribute",
        "distinct",
        2,
        [{"string": "value1"}, list_attr("strings", "value1", "value2"), list_attr("strings", "value2", "value3")],
        [device1, device3],
        None,
    ),
    (
        "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements",
        "stringAttribute",
        "distinct",
        2,
        [{"string": "value1"}, list_attr("strings", "value1", "value2")],
        None,
        None,
    ),
    (
        "list-attributes-distinct-constraint-list-of-int-values-all-distinct",
        "numa",
        "distinct",
        2,
        [list_attr("ints", 0, 1), list_attr("ints", 1, 2), list_attr("ints", 2, 3)],
        [device1, device3],
        None,
    ),
    (
        "list-attributes-distinct-constraint-list-of-bool-values-all-distinct",
        "boolAttribute",
        "distinct",
        2,
        [list_attr("bools", True), list_attr("bools", True, False), list_attr("bools", False)],
        [device1, device3],
        None,
    ),
    (
        "list-attributes-distinct-constraint-list-of-version-values-all-distinct",
        "driverVersion",
        "distinct",
        2,
        [
            list_attr("versions", "1.0.0", "1.1.0"),
            list_attr("versions", "1.1.0", "2.0.0"),
            list_attr("versions", "2.0.0", "2.1.0"),
        ],
        [device1, device3],
        None,
    ),
):
    case(
        _name,
        claims=[
            claim(claim0, request(req0, classA, _count), constraints=[{f"{_kind}Attribute": f"{driverA}/{_attr}"}])
        ],
        classes=[cls(classA, driverA)],
        slices=[slice_with_devices(slice1, node1, pool1, driverA, *_two_or_three(_attr, *_values))],
        node=node(node1, region1),
        expect=None
        if _want is None
        else [allocation(local_node_selector(node1), *(result(req0, driverA, pool1, d) for d in _want))],
        xfail=_xfail,
        list_attrs=True,
    )
case(
    "list-attributes-match-constaint-list-of-string-values-without-common-elements",
    # upstream's claim repeats the request name req-0 (two requests of one device each)
    claims=[
        claim(
            claim0,
            request(req0, classA, 1),
            request(req0, classA, 1),
            constraints=[{"matchAttribute": stringAttribute}],
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            *_two_or_three(
                "stringAttribute", list_attr("strings", "value1", "value2"), list_attr("strings", "value3", "value4")
            ),
        )
    ],
    node=node(node1, region1),
    list_attrs=True,
)
case(
    "list-attributes-match-constaint-with-empty-or-unknown-type",
    claims=[claim(claim0, request(req0, classA, 2), constraints=[{"matchAttribute": stringAttribute}])],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, pool1, driverA, *_two_or_three("stringAttribute", {}, list_attr("strings")))
    ],
    node=node(node1, region1),
    list_attrs=True,
    error="unsupported attribute value",
)
case(
    "list-attributes-disabled-match-constraint-with-lists",
    claims=[claim(claim0, request(req0, classA, 2), constraints=[{"matchAttribute": stringAttribute}])],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            *_two_or_three(
                "stringAttribute",
                list_attr("strings", "value1", "value2", "value3"),
                list_attr("strings", "value2", "value3", "value4"),
            ),
        )
    ],
    node=node(node1, region1),
    error="unsupported attribute value",
)
case(
    "list-attributes-distinct-constaint-with-empty-or-unknown-type",
    claims=[claim(claim0, request(req0, classA, 2), constraints=[{"distinctAttribute": versionAttribute}])],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, *_two_or_three("driverVersion", list_attr("versions"), {"versions": None})
        )
    ],
    node=node(node1, region1),
    list_attrs=True,
    error="unsupported attribute value",
)
case(
    "list-attributes-disabled-distinct-constraint-with-lists",
    claims=[claim(claim0, request(req0, classA, 2), constraints=[{"distinctAttribute": stringAttribute}])],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            *_two_or_three(
                "stringAttribute",
                list_attr("strings", "value1", "value2", "value3"),
                list_attr("strings", "value2", "value3", "value4"),
            ),
        )
    ],
    node=node(node1, region1),
    error="unsupported attribute value",
)
case(
    "allocation-mode-all-with-multi-host-resource-pool",
    claims=[claim(claim0, all_request(req0, classA))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1)),
        slice_with_devices(slice2, node2, resource_pool(pool1, 2), driverA, device(device2)),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device1))],
)
case(
    "multi-host-resource-pool-with-stale-slice-for-current-node",
    claims=[claim_with_request(claim0, req0, classA)],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2, 1), driverA, device(device1)),
        slice_with_devices(slice2, node2, resource_pool(pool1, 2, 2), driverA, device(device2)),
    ],
    node=node(node1, region1),
)
# upstream's next four cases give two slices the same name ("slice-1" twice, "slice-2"
# twice); the API (and mockkube's allocator) key slices by name, so they get -a/-b here
for _case, _old_node, _new_node, _new_count, _want in (
    ("multi-host-resource-pool-complete-update-from-node-1-to-node-2", node1, node2, 2, device1),
    ("multi-host-resource-pool-complete-update-from-node-2-to-node-1", node2, node1, 2, device1),
    ("multi-host-resource-pool-incomplete-update-from-node-1-to-node-2", node1, node2, 1, device1),
    ("multi-host-resource-pool-incomplete-update-from-node-2-to-node-1", node2, node1, 1, None),
):
    _slices = [
        slice_with_devices(f"{slice1}-{x}", _old_node, resource_pool(pool1, 2, 1), driverA, device(d))
        for x, d in (("a", device1), ("b", device2))
    ]
    _slices += [
        slice_with_devices(f"{slice2}-{x}", _new_node, resource_pool(pool1, 2, 2), driverA, device(d))
        for x, d in (("a", device1), ("b", device2))
    ][:_new_count]
    case(
        _case,
        claims=[claim_with_request(claim0, req0, classA)],
        classes=[cls(classA, driverA)],
        slices=_slices,
        node=node(node1, region1),
        expect=None if _want is None else [allocation(local_node_selector(node1), result(req0, driverA, pool1, _want))],
    )
case(
    "partitionable-devices-same-counter-set-name-in-different-resource-slices",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 4), driverA, device(device1)),
        counters_slice(slice2, resource_pool(pool1, 4), driverA, node1, counter_set(counterSet1)),
        slice_with_devices(slice3, node1, resource_pool(pool1, 4), driverA, device(device2)),
        counters_slice(slice4, resource_pool(pool1, 4), driverA, node1, counter_set(counterSet1)),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, resource_pool(pool1, 2), driverA, device(device1, consumes=[consumes(counterSet2)])
        ),
        counters_slice(slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1)),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            resource_pool(pool1, 2),
            driverA,
            device(device1, consumes=[consumes(counterSet1, memory="8Gi")]),
        ),
        counters_slice(
            slice2, resource_pool(pool1, 2), driverA, node1, counter_set(counterSet1, **{"other-memory": "8Gi"})
        ),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1, node1, pool1, driverA, device(device1, consumes=[consumes(counterSet1, memory="8Gi")])
        ),
        counters_slice(slice2, pool2, driverA, node1, counter_set(counterSet1, memory="8Gi")),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
    claims=[
        claim(
            claim0,
            prioritized(
                req0,
                sub_request(subReq0, classA, 1, mem_at_least("6Gi")),
                sub_request(subReq1, classA, 1, mem_at_least("2Gi")),
            ),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        counters_slice(slice1, resource_pool(pool1, 3), driverA, node1, counter_set(counterSet1, memory="8Gi")),
        slice_with_devices(
            slice2,
            node1,
            resource_pool(pool1, 3),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="6Gi")]),
            device(device2, fromCounters, consumes=[consumes(counterSet1, memory="2Gi")]),
        ),
        slice_with_devices(
            slice3,
            node2,
            resource_pool(pool1, 3),
            driverA,
            device(device3, consumes=[consumes(counterSet1, memory="6Gi")]),
        ),
    ],
    allocated=[did(driverA, pool1, device3)],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0SubReq1, driverA, pool1, device2))],
)
case(
    "partitionable-devices-validation-error-on-non-targeting-slice",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        counters_slice(slice1, resource_pool(pool1, 3), driverA, node1, counter_set(counterSet1, memory="8Gi")),
        slice_with_devices(
            slice2,
            node1,
            resource_pool(pool1, 3),
            driverA,
            device(device1, fromCounters, consumes=[consumes(counterSet1, memory="6Gi")]),
        ),
        slice_with_devices(
            slice3,
            node2,
            resource_pool(pool1, 3),
            driverA,
            device(device3, consumes=[consumes(counterSet2, memory="6Gi")]),
        ),
    ],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "different-resourceslices-in-pool-can-target-different-nodes",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node2, resource_pool(pool1, 2), driverA, device(device1)),
        slice_with_devices(slice2, node1, resource_pool(pool1, 2), driverA, device(device2)),
    ],
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool1, device2))],
)
INVALID_PLUS_GOOD = [
    slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1)),
    slice_with_devices(slice2, node1, resource_pool(pool1, 2), driverA, device(device1)),
    slice_with_devices(slice3, node1, resource_pool(pool2, 1), driverA, device(device2)),
]
case(
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=INVALID_PLUS_GOOD,
    node=node(node1, region1),
    expect=[allocation(local_node_selector(node1), result(req0, driverA, pool2, device2))],
)
case(
    "invalid-pool-is-error-if-no-other-device-can-be-allocated",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=INVALID_PLUS_GOOD,
    allocated=[did(driverA, pool2, device2)],
    node=node(node1, region1),
    error="invalid resource pools were encountered",
)
case(
    "no-allocation-from-incomplete-pools",
    claims=[claim(claim0, request(req0, classA, 1))],
    classes=[cls(classA, driverA)],
    slices=[slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1))],
    node=node(node1, region1),
)
FOUR = [device(device1), device(device2), device(device3), device(device4)]
for _case, _slices in (
    (
        "check-combinations-within-single-request-single-pool-single-slice",
        [slice_with_devices(slice1, node1, pool1, driverA, *FOUR)],
    ),
    (
        "check-combinations-within-single-request-single-pool-multiple-slices",
        [
            slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, *FOUR[:2]),
            slice_with_devices(slice2, node1, resource_pool(pool1, 2), driverA, *FOUR[2:]),
        ],
    ),
    (
        "check-combinations-within-single-request-multiple-pools-multiple-slices",
        [
            slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, FOUR[0]),
            slice_with_devices(slice2, node1, resource_pool(pool1, 2), driverA, FOUR[1]),
            slice_with_devices(slice3, node1, pool2, driverA, *FOUR[2:]),
        ],
    ),
    (
        "check-combinations-within-single-request-many-pools",
        [
            slice_with_devices(f"slice-{i + 1}", node1, p, driverA, d)
            for i, (p, d) in enumerate(zip((pool1, pool2, pool3, pool4), FOUR))
        ],
    ),
):
    case(
        _case,
        claims=[claim(claim0, request(req0, classA, 5))],
        classes=[cls(classA, driverA)],
        slices=_slices,
        node=node(node1, region1),
    )
TYPE_X = sel(f'device.attributes["{driverA}"].type == "X"')
TYPE_Y = sel(f'device.attributes["{driverA}"].type == "Y"')
case(
    "check-combinations-with-backtracking",
    claims=[claim(claim0, request(req1, classA, 2), request(req2, classA, 1, TYPE_X))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(type="X")),
            device(device2, None, attrs(type="Y")),
            device(device3, None, attrs(type="Y")),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req1, driverA, pool1, device2),
            result(req1, driverA, pool1, device3),
            result(req2, driverA, pool1, device1),
        )
    ],
)
case(
    "check-combinations-with-backtracking-across-slices-and-pools",
    claims=[claim(claim0, request(req1, classA, 2), request(req2, classA, 1, TYPE_X))],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(slice1, node1, resource_pool(pool1, 2), driverA, device(device1, None, attrs(type="X"))),
        slice_with_devices(slice2, node1, resource_pool(pool1, 2), driverA, device(device2, None, attrs(type="Y"))),
        slice_with_devices(
            slice3, node1, pool2, driverA, device(device3, None, attrs(type="Y"), binding=(["IsPrepare"], []))
        ),
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req1, driverA, pool1, device2),
            bc_result(req1, driverA, pool2, device3, ["IsPrepare"], []),
            result(req2, driverA, pool1, device1),
        )
    ],
)
case(
    "check-combinations-with-prioritized-list",
    claims=[
        claim(
            claim0,
            prioritized(req1, sub_request(subReq0, classA, 3, TYPE_Y), sub_request(subReq1, classA, 2)),
            prioritized(req2, sub_request(subReq0, classA, 2), sub_request(subReq1, classA, 1, TYPE_X)),
        )
    ],
    classes=[cls(classA, driverA)],
    slices=[
        slice_with_devices(
            slice1,
            node1,
            pool1,
            driverA,
            device(device1, None, attrs(type="X")),
            device(device2, None, attrs(type="Y")),
            device(device3, None, attrs(type="Y")),
        )
    ],
    node=node(node1, region1),
    expect=[
        allocation(
            local_node_selector(node1),
            result(req1SubReq1, driverA, pool1, device2),
            result(req1SubReq1, driverA, pool1, device3),
            result(req2SubReq1, driverA, pool1, device1),
        )
    ],
)


# -- running a case ------------------------------------------------------------------------


def _norm_selector(selector: dict | None) -> Any:
    if selector is None:
        return None
    terms = []
    for t in selector.get("nodeSelectorTerms") or ():
        term = {}
        for k in ("matchExpressions", "matchFields"):
            reqs = sorted((r["key"], r["operator"], tuple(sorted(r.get("values") or ()))) for r in t.get(k) or ())
            term[k] = reqs
        terms.append(repr(term))
    return sorted(terms)


def _norm_results(results: list[dict]) -> list[str]:
    """Order-insensitive; an empty list is the same as no field (omitempty on the wire)."""
    return sorted(repr(sorted((k, v) for k, v in r.items() if v not in (None, [], {}))) for r in results)


def _state(c: Case) -> AllocatedState:
    state = AllocatedState()
    for driver, pool, dev in c.allocated:
        state.add({"devices": {"results": [{"request": "r", "driver": driver, "pool": pool, "device": dev}]}})
    for r in c.allocated_shares:
        state.add({"devices": {"results": [r]}})
    return state


@pytest.mark.parametrize(
    "name",
    ids=list(CASES),
    argvalues=[
        pytest.param(n, marks=pytest.mark.xfail(reason=c.xfail, strict=True)) if c.xfail else n
        for n, c in CASES.items()
    ],
)
def test_upstream_allocator_case(name: str) -> None:
    c = CASES[name]
    alloc = Allocator(c.slices, c.classes, features=replace(c.features, list_type_attributes=c.list_attrs))
    share_ids = itertools.repeat(fixedShareID)
    outcome = alloc.allocate(
        c.claims, c.node or node(node1, region1), _state(c), NOW, new_share_id=lambda: next(share_ids)
    )
    if c.error is not None:
        assert not outcome.ok, f"expected error {c.error!r}, got {outcome.results!r}"
        assert c.error in outcome.reason
        return
    assert not outcome.fatal, outcome.reason
    if not c.expect:
        assert not outcome.ok and outcome.reason == REASON_CANNOT_ALLOCATE or outcome.results == [], outcome
        return
    assert outcome.ok, outcome.reason
    got = outcome.results
    assert len(got) == len(c.expect)
    for want, have in zip(c.expect, got):
        devs = have["devices"]
        assert _norm_results(devs["results"]) == _norm_results(want["results"])
        assert devs.get("config") == want["config"]
        assert _norm_selector(have.get("nodeSelector")) == _norm_selector(want["selector"])
        assert have.get("allocationTimestamp") == want.get("allocationTimestamp")
