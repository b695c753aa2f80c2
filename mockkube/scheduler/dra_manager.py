"""The scheduler's DRA view (upstream's DefaultDRAManager): claims as last seen or as
last written by the scheduler itself (an assume cache), the allocated-device tally
including in-flight allocations between Reserve and PreBind, and the pure `Allocator`
kept current from ResourceSlices, DeviceClasses and DeviceTaintRules.
"""

from __future__ import annotations

from mockkube.dra import extended
from mockkube.dra.allocator import Allocator, Features
from mockkube.dra.state import AllocatedState


def _rv(obj: dict) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class DRAManager:
    def __init__(self, gates=None) -> None:
        """``gates``: the cluster's FeatureGates (None: every DRA feature on)."""
        on = gates.enabled if gates is not None else (lambda name: True)
        self.allocator = Allocator(features=Features.from_gates(gates))
        # KEP-5004: off, no DeviceClass backs an extended resource (NodeResourcesFit alone)
        self.extended_resources = on("DRAExtendedResource")
        # KEP-5517: off, slices' node-allocatable mappings are ignored
        self.node_allocatable = on("DRANodeAllocatableResources")
        self.claims: dict[tuple[str, str], dict] = {}
        self.state = AllocatedState()
        self._counted: dict[str, dict] = {}  # claim uid -> allocation in `state`
        self._from_claims: dict[str, dict] = {}  # claim uid -> status.allocation
        self.in_flight: dict[str, dict] = {}  # claim uid -> allocation reserved, not yet written
        self._ext_map: dict[str, str] | None = None
        self._ext_version = -1
        self._pool_mappings: dict[int, tuple[object, bool]] = {}
        self.any_mappings = False  # some slice maps node-allocatable resources (KEP-5517)

    # -- claims -----------------------------------------------------------------
    def set_claim(self, claim: dict) -> bool:
        """Record a claim (informer or own write); an older version never replaces a newer
        one. Returns True when the stored claim changed."""
        meta = claim.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        old = self.claims.get(key)
        if old is not None and (old.get("metadata") or {}).get("uid") == meta.get("uid") and _rv(old) >= _rv(claim):
            return False
        if old is not None and (old.get("metadata") or {}).get("uid") != meta.get("uid"):
            self._drop(old)
        self.claims[key] = claim
        uid = meta.get("uid", "")
        alloc = (claim.get("status") or {}).get("allocation")
        if alloc:
            self._from_claims[uid] = alloc
            self.in_flight.pop(uid, None)
        else:
            self._from_claims.pop(uid, None)
        self._recount(uid)
        return True

    def remove_claim(self, claim: dict) -> None:
        meta = claim.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        cur = self.claims.get(key)
        if cur is not None and (cur.get("metadata") or {}).get("uid") == meta.get("uid"):
            del self.claims[key]
        self._drop(claim)

    def _drop(self, claim: dict) -> None:
        uid = (claim.get("metadata") or {}).get("uid", "")
        self._from_claims.pop(uid, None)
        self._recount(uid)
        self.allocator.forget_claim(uid)

    def get_claim(self, namespace: str, name: str) -> dict | None:
        return self.claims.get((namespace, name))

    def _recount(self, uid: str) -> None:
        want = self.in_flight.get(uid) or self._from_claims.get(uid)
        have = self._counted.get(uid)
        if want is have:
            return
        if have is not None:
            self.state.remove(have)
            del self._counted[uid]
        if want is not None:
            self.state.add(want)
            self._counted[uid] = want

    # -- in-flight allocations (Reserve .. PreBind) -----------------------------------
    def reserve(self, uid: str, allocation: dict) -> None:
        self.in_flight[uid] = allocation
        self._recount(uid)

    def unreserve(self, uid: str) -> None:
        if self.in_flight.pop(uid, None) is not None:
            self._recount(uid)

    # -- cluster view ---------------------------------------------------------------
    def set_slice(self, obj: dict) -> None:
        self.allocator.update_slice(obj)
        if (
            self.node_allocatable
            and not self.any_mappings
            and any(d.get("nodeAllocatableResourceMappings") for d in (obj.get("spec") or {}).get("devices") or ())
        ):
            self.any_mappings = True

    def remove_slice(self, obj: dict) -> None:
        self.allocator.remove_slice((obj.get("metadata") or {}).get("name", ""))

    def set_class(self, obj: dict) -> None:
        self.allocator.update_class(obj)
        self._ext_map = None

    def remove_class(self, obj: dict) -> None:
        self.allocator.remove_class((obj.get("metadata") or {}).get("name", ""))
        self._ext_map = None

    def set_taint_rule(self, obj: dict) -> None:
        self.allocator.update_taint_rule(obj)

    def remove_taint_rule(self, obj: dict) -> None:
        self.allocator.remove_taint_rule((obj.get("metadata") or {}).get("name", ""))

    def extended_mapping(self) -> dict[str, str]:
        """Extended resource name -> DeviceClass (KEP-5004), cached until a class changes."""
        if not self.extended_resources:
            return {}
        if self._ext_map is None or self._ext_version != self.allocator.classes_version:
            self._ext_map = extended.extended_resource_classes(self.allocator.classes.values())
            self._ext_version = self.allocator.classes_version
        return self._ext_map

    def dra_backed(self) -> set[str]:
        return set(self.extended_mapping())

    # -- KEP-5517 helpers -----------------------------------------------------------
    def _pool_maps(self, pool) -> bool:
        hit = self._pool_mappings.get(id(pool))
        if hit is None or hit[0] is not pool:
            has = any(d.device.get("nodeAllocatableResourceMappings") for d in pool.devices)
            hit = (pool, has)
            if len(self._pool_mappings) > 100_000:
                self._pool_mappings.clear()
            self._pool_mappings[id(pool)] = hit
        return hit[1]

    def node_maps_allocatable(self, node: dict) -> bool:
        """Whether any device usable on the node maps node-allocatable resources."""
        if not self.any_mappings:
            return False
        return any(self._pool_maps(pool) for pool, _ in self.allocator.node_view(node).pools)

    def slices_with_mappings(self, allocation: dict) -> list[dict]:
        """The slices of the pools an allocation uses, if any device there maps node
        allocatable resources; [] (the common case) otherwise."""
        out: list[dict] = []
        pools = self.allocator.pools
        for r in (allocation.get("devices") or {}).get("results") or ():
            pool = pools.get((r.get("driver", ""), r.get("pool", "")))
            if pool is None:
                continue
            if self._pool_maps(pool):
                out.extend(s for s in pool.slices if s not in out)
        return out
