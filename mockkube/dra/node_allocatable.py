"""Node allocatable resources via DRA (KEP-5517): how much cpu/memory/... an allocation
takes from the node, from the allocated devices' `nodeAllocatableResourceMappings`.

Per allocated device and mapped resource:
- without capacityKey: allocationMultiplier (default 1) per device;
- with capacityKey: consumedCapacity[capacityKey] of the result (the whole device capacity
  when the device was allocated exclusively) times allocationMultiplier (default 1).
Results with adminAccess take nothing. The sum is counted once per claim.
"""

from __future__ import annotations

from typing import Iterable

from mockkube.dra.qty import Quantity, mul, q

ONE = q("1")


def _index(slices: Iterable[dict]) -> dict[tuple[str, str, str], dict]:
    best: dict[tuple[str, str, str], tuple[int, dict]] = {}
    for s in slices:
        spec = s.get("spec") or {}
        driver = spec.get("driver", "")
        pool = spec.get("pool") or {}
        gen = int(pool.get("generation", 0))
        for d in spec.get("devices") or ():
            key = (driver, pool.get("name", ""), d.get("name", ""))
            if key not in best or gen >= best[key][0]:
                best[key] = (gen, d)
    return {k: v[1] for k, v in best.items()}


def _lookup(mapping: dict, key: str, driver: str) -> object:
    if key in mapping:
        return mapping[key]
    if "/" in key:
        domain, _, ident = key.partition("/")
        if domain == driver and ident in mapping:
            return mapping[ident]
    elif f"{driver}/{key}" in mapping:
        return mapping[f"{driver}/{key}"]
    return None


def node_allocatable_demand(allocation: dict, slices: Iterable[dict]) -> dict[str, Quantity]:
    """resource name -> quantity the allocation (status.allocation) takes from the node."""
    devices = _index(slices)
    out: dict[str, Quantity] = {}
    for r in (allocation.get("devices") or {}).get("results") or ():
        if r.get("adminAccess"):
            continue
        driver = r.get("driver", "")
        device = devices.get((driver, r.get("pool", ""), r.get("device", "")))
        if device is None:
            continue
        for resource, m in (device.get("nodeAllocatableResourceMappings") or {}).items():
            m = m or {}
            multiplier = q(m["allocationMultiplier"]) if m.get("allocationMultiplier") is not None else ONE
            key = m.get("capacityKey")
            if key:
                consumed = _lookup(r.get("consumedCapacity") or {}, key, driver)
                if consumed is None:
                    cap = _lookup(device.get("capacity") or {}, key, driver)
                    if cap is None:
                        continue
                    consumed = (cap or {}).get("value", "0")
                amount = mul(q(consumed), multiplier)
            else:
                amount = multiplier
            out[resource] = out[resource] + amount if resource in out else amount
    return out


def claim_status(claim_name: str, containers: list[str], demand: dict[str, Quantity]) -> dict:
    """One pod.status.nodeAllocatableResourceClaimStatuses entry; containers in pod order
    (init containers first), each once, omitted when none references the claim."""
    entry: dict = {"resourceClaimName": claim_name, "resources": {k: v.canonical() for k, v in sorted(demand.items())}}
    if containers:
        entry["containers"] = list(dict.fromkeys(containers))
    return entry
