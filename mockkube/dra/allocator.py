"""The structured allocator: which devices on a node satisfy a pod's claims.

Pure and incremental. `Allocator` is built once from the cluster view (ResourceSlices,
DeviceClasses, DeviceTaintRules) and kept current with `update_*`/`remove_*`; per node it
caches the devices available there and, per (class selectors, request selectors), the
devices that match, so the common case (one ExactCount request, no constraints) is a
couple of dict lookups plus a scan to the first free device. The search itself follows
upstream's allocateOne: claims, then requests, then devices, depth first, first solution
wins; backtracking covers constraints, firstAvailable subrequests and several claims.

Upstream deviations, deliberate: devices with bindingConditions are used only when no
solution exists without them (KEP-5007 preference); the AllocationResultsMaxSize limit
(32 per claim) makes a branch fail rather than be retried with a special error.

    alloc = Allocator(slices, classes, taint_rules)
    outcome = alloc.allocate(claims, node, AllocatedState.from_claims(all_claims), now)
    outcome.results   # [status.allocation per claim] or None; outcome.reason otherwise
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from mockkube.dra import capacity as cap
from mockkube.dra import cel
from mockkube.dra import constraints as cons
from mockkube.dra import pools as dra_pools
from mockkube.dra.counters import CounterTracker
from mockkube.dra.pools import DeviceID, DeviceInfo, PoolInfo, build_pool
from mockkube.dra.state import AllocatedState
from mockkube.dra.taints import taint_prevents_allocation

ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_MAX_SIZE = 8
REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
REASON_INVALID_POOLS = "invalid resource pools were encountered"


@dataclass(frozen=True)
class Features:
    """The DRA features the allocator honours (upstream's structured ``Features``), from
    the cluster's gates. Off, a feature's requests are errors (admin access, subrequests,
    capacity requests) and its devices are passed over (counter-consuming or per-device
    node selection, binding conditions) or its data ignored (taints; multiple allocations:
    such a device is exclusive), as upstream's allocator does with that feature off."""

    admin_access: bool = True  # DRAAdminAccess
    prioritized_list: bool = True  # DRAPrioritizedList
    partitionable_devices: bool = True  # DRAPartitionableDevices
    device_taints: bool = True  # DRADeviceTaints
    device_binding: bool = True  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    consumable_capacity: bool = True  # DRAConsumableCapacity
    # DRAListTypeAttributes (alpha, off unless turned on, also without gates): list-valued
    # attributes are CEL lists and constraints compare them as sets
    list_type_attributes: bool = False

    @classmethod
    def from_gates(cls, gates: Any) -> "Features":
        """From a FeatureGates (None: everything on)."""
        if gates is None:
            return cls()
        on = gates.enabled
        return cls(
            admin_access=on("DRAAdminAccess"),
            prioritized_list=on("DRAPrioritizedList"),
            partitionable_devices=on("DRAPartitionableDevices"),
            device_taints=on("DRADeviceTaints"),
            device_binding=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
            consumable_capacity=on("DRAConsumableCapacity"),
            list_type_attributes=on("DRAListTypeAttributes"),
        )


class AllocationOutcome:
    """Result of `Allocator.allocate` for one node.

    ok: whether all claims fit on the node.
    results: one status.allocation dict per claim (same order), or None on failure; built
        on first access, because Filter runs on every node but only one node is chosen.
    reason: why not ("cannot allocate all claims" or an error message).
    fatal: the failure is an error in a claim/class (CEL runtime error, missing class, an
        "All" request over an incomplete pool...): upstream aborts the pod's scheduling
        attempt with it instead of just filtering the node.
    cel_errors: CEL runtime error messages met (subset of the fatal reasons).
    subrequests: per claim, request name -> index of the firstAvailable entry chosen
        (for Score: lower index is better).
    interrupted: the caller's ``interrupt`` asked the search to stop (upstream's context
        deadline or cancellation); nothing is known about the node then.
    """

    __slots__ = ("_results", "_build", "reason", "fatal", "cel_errors", "subrequests", "interrupted")

    def __init__(
        self,
        results: list[dict] | None = None,
        reason: str = "",
        fatal: bool = False,
        cel_errors: list[str] | None = None,
        subrequests: list[dict[str, int]] | None = None,
        build: Callable[[], list[dict]] | None = None,
        interrupted: bool = False,
    ) -> None:
        self.interrupted = interrupted
        self._results = results
        self._build = build
        self.reason = reason
        self.fatal = fatal
        self.cel_errors = cel_errors or []
        self.subrequests = subrequests or []

    @property
    def ok(self) -> bool:
        return self._results is not None or self._build is not None

    @property
    def score(self) -> int:
        """DynamicResources Score contribution: FIRST_AVAILABLE_MAX_SIZE - index summed over
        every firstAvailable request (earlier subrequests score higher)."""
        return sum(FIRST_AVAILABLE_MAX_SIZE - i for chosen in self.subrequests for i in chosen.values())

    @property
    def results(self) -> list[dict] | None:
        if self._build is not None:
            self._results, self._build = self._build(), None
        return self._results

    def __repr__(self) -> str:
        if self.ok:
            return f"AllocationOutcome(results={self.results!r}, subrequests={self.subrequests!r})"
        return f"AllocationOutcome(reason={self.reason!r}, fatal={self.fatal})"


class _Interrupted(Exception):
    """The caller's interrupt() answered True: stop searching at once."""


class _Fatal(Exception):
    def __init__(self, message: str, is_cel: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.is_cel = is_cel


def claim_ref(claim: dict) -> str:
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else meta.get("name", "")


@dataclass(eq=False)
class _Req:
    """One request or firstAvailable subrequest, resolved against its DeviceClass."""

    base: str  # request name
    sub: str  # subrequest name or ""
    class_name: str
    klass: dict
    class_exprs: tuple[str, ...]
    exprs: tuple[str, ...]
    mode: str
    count: int
    admin: bool
    tolerations: list[dict]
    capacity: dict | None

    key: tuple = ()  # what selects the candidates: (class, class selectors, request selectors)

    def __post_init__(self) -> None:
        self.key = (self.class_name, self.class_exprs, self.exprs)

    @property
    def full_name(self) -> str:
        return f"{self.base}/{self.sub}" if self.sub else self.base


@dataclass(eq=False)
class _Slot:
    alts: list[_Req]
    is_sub: bool


@dataclass(eq=False)
class _Plan:
    claim: dict
    slots: list[_Slot]
    simple: bool  # fast path: plain ExactCount requests, no constraints/admin/capacity
    single: "_Req | None" = None  # simple with exactly one request for one device
    # per slot: the fewest devices the claim's later requests need (see _min_devices), so a
    # branch that cannot stay within the results limit is cut before it is searched
    min_after: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.simple and len(self.slots) == 1 and self.slots[0].alts[0].count == 1:
            self.single = self.slots[0].alts[0]
        self.min_after = [_min_devices(self.slots[i + 1 :]) for i in range(len(self.slots))]


def _is_simple(claim: dict, slots: list[_Slot]) -> bool:
    if ((claim.get("spec") or {}).get("devices") or {}).get("constraints"):
        return False
    total = 0
    for slot in slots:
        req = slot.alts[0]
        if slot.is_sub or req.mode != "ExactCount" or req.admin or req.capacity:
            return False
        total += req.count
    return total <= ALLOCATION_RESULTS_MAX_SIZE


class _NodeView:
    """Devices usable on one node, in pool order, with per-selector candidate caches.

    pools: the node's pools with devices there (upstream's GatherPools result); state:
    id(pool) -> (complete, invalid reason) as judged for this node; remote: the pools that
    concern the node only through their counter sets (GatherPools counts a slice with
    counter sets for every node) and are incomplete or invalid, as (pool, complete, invalid)
    -- the same for every such node, so they are judged once per index (see _reindex)."""

    __slots__ = ("version", "labels", "pools", "state", "remote", "usable", "has_binding", "candidates", "plain")

    def __init__(
        self,
        version: int,
        labels: dict,
        pools: list[tuple[PoolInfo, list[DeviceInfo]]],
        state: dict[int, tuple[bool, str]],
        remote: list[tuple[PoolInfo, bool, str]] | None = None,
        features: Features | None = None,
    ) -> None:
        self.version = version
        self.labels = labels
        self.pools = pools
        self.state = state
        self.remote = remote or []
        self.usable = [d for p, devs in pools if state[id(p)] == (True, "") for d in devs]
        f = features or Features()
        if not (f.partitionable_devices and f.device_binding):  # devices those features describe
            self.usable = [
                d
                for d in self.usable
                if (f.partitionable_devices or not d.consumes_counters)
                and (f.device_binding or not (d.binding_conditions or d.binding_failure_conditions))
            ]
        self.has_binding = any(d.binding_conditions for d in self.usable)
        self.candidates: dict[tuple, list[tuple[DeviceInfo, tuple | None]]] = {}
        # per selector key: the candidates when all are plain and matched without error
        # (the fast path then only skips devices in use), else None
        self.plain: dict[tuple, list[DeviceInfo] | None] = {}


class Allocator:
    """Cluster view for allocation; update it as slices, classes and taint rules change."""

    def __init__(
        self,
        slices: Iterable[dict] = (),
        classes: Iterable[dict] = (),
        taint_rules: Iterable[dict] = (),
        features: Features | None = None,
    ) -> None:
        self.features = features or Features()
        self._slices: dict[str, dict] = {}
        self._pool_slices: dict[tuple[str, str], dict[str, dict]] = {}
        self._pools: dict[tuple[str, str], PoolInfo] = {}  # newest generation
        self._gen_pools: dict[tuple[str, str], dict[int, PoolInfo]] = {}  # every generation
        self._classes: dict[str, dict] = {}
        self.classes_version = 0  # changes with every class update (for callers' caches)
        self._rules: dict[str, dict] = {}
        self._version = 0
        self._index_version = -1
        self._last_plans: list | None = None
        self._last_simple = False
        # slices as (pool generation, slice index): by node name; selecting nodes
        # (allNodes, nodeSelector, perDeviceNodeSelection); with counter sets, by pool (they
        # concern every node); pools that concern a node only through their counter sets and
        # are incomplete or invalid there, as (key, pool, complete, invalid reason)
        self._by_node: dict[str, list[tuple[PoolInfo, int]]] = {}
        self._global: list[tuple[PoolInfo, int]] = []
        self._counter_slices: dict[tuple[str, str], list[tuple[PoolInfo, int]]] = {}
        self._remote: list[tuple[tuple[str, str], PoolInfo, bool, str]] = []
        self._views: dict[str, _NodeView] = {}
        # claim uid -> ((namespace, name, resourceVersion), its plan or why it has none): one
        # entry per claim, its newest version's, forgotten with the claim (``forget_claim``)
        self._plans: dict[str, tuple[tuple, _Plan | str]] = {}
        for r in taint_rules:
            self._rules[(r.get("metadata") or {}).get("name", "")] = r
        for c in classes:
            self.update_class(c)
        for s in slices:
            self.update_slice(s)

    # ------------------------------------------------------------------ updates

    @staticmethod
    def _pool_key(slice_: dict) -> tuple[str, str]:
        spec = slice_.get("spec") or {}
        return (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""))

    def _rebuild_pool(self, key: tuple[str, str]) -> None:
        members = self._pool_slices.get(key)
        if not members:
            self._pool_slices.pop(key, None)
            self._pools.pop(key, None)
            self._gen_pools.pop(key, None)
        else:
            rules = list(self._rules.values())
            gens = {
                g: build_pool(key[0], key[1], members.values(), rules, g, self.features.list_type_attributes)
                for g in sorted({dra_pools.slice_generation(m) for m in members.values()})
            }
            self._gen_pools[key] = gens
            self._pools[key] = gens[max(gens)]
        self._version += 1

    def update_slice(self, slice_: dict) -> None:
        """Add or replace a ResourceSlice (by metadata.name)."""
        name = (slice_.get("metadata") or {}).get("name", "")
        old = self._slices.get(name)
        if old is not None:
            okey = self._pool_key(old)
            self._pool_slices.get(okey, {}).pop(name, None)
            if okey != self._pool_key(slice_):
                self._rebuild_pool(okey)
        self._slices[name] = slice_
        key = self._pool_key(slice_)
        self._pool_slices.setdefault(key, {})[name] = slice_
        self._rebuild_pool(key)

    def remove_slice(self, name: str) -> None:
        old = self._slices.pop(name, None)
        if old is not None:
            key = self._pool_key(old)
            self._pool_slices.get(key, {}).pop(name, None)
            self._rebuild_pool(key)

    def update_class(self, klass: dict) -> None:
        self._classes[(klass.get("metadata") or {}).get("name", "")] = klass
        self._plans.clear()
        self._last_plans = None
        self.classes_version += 1

    def remove_class(self, name: str) -> None:
        self._classes.pop(name, None)
        self._plans.clear()
        self._last_plans = None
        self.classes_version += 1

    def update_taint_rule(self, rule: dict) -> None:
        self._rules[(rule.get("metadata") or {}).get("name", "")] = rule
        self._rebuild_all()

    def remove_taint_rule(self, name: str) -> None:
        if self._rules.pop(name, None) is not None:
            self._rebuild_all()

    def _rebuild_all(self) -> None:
        for key in list(self._pool_slices):
            self._rebuild_pool(key)

    @property
    def classes(self) -> dict[str, dict]:
        return self._classes

    @property
    def pools(self) -> dict[tuple[str, str], PoolInfo]:
        return self._pools

    # ------------------------------------------------------------------ node views

    def _reindex(self) -> None:
        by_node: dict[str, list[tuple[PoolInfo, int]]] = {}
        glob: list[tuple[PoolInfo, int]] = []
        counters: dict[tuple[str, str], list[tuple[PoolInfo, int]]] = {}
        for key in sorted(self._gen_pools):
            for pool in self._gen_pools[key].values():
                for si, s in enumerate(pool.slices):
                    spec = s.get("spec") or {}
                    # the API keeps counter sets and devices in separate slices; one with both
                    # is placed by its node selection, so its devices are found where they are
                    if spec.get("sharedCounters") and not spec.get("devices"):
                        counters.setdefault(key, []).append((pool, si))  # GatherPools: for every node
                    elif spec.get("nodeName"):
                        by_node.setdefault(spec["nodeName"], []).append((pool, si))
                    elif spec.get("perDeviceNodeSelection"):
                        if self.features.partitionable_devices:  # else its devices reach no node
                            glob.append((pool, si))
                    elif spec.get("allNodes") or spec.get("nodeSelector") is not None:
                        glob.append((pool, si))
                    # else: no node selection known, the slice concerns no node
        self._by_node, self._global, self._counter_slices = by_node, glob, counters
        remote = []
        for key, entries in counters.items():
            found = self._node_pool(key, [(p, si, []) for p, si in entries])
            if found is not None and found[2:] != (True, ""):
                remote.append((key, found[0], found[2], found[3]))
        self._remote = remote
        self._views.clear()
        self._index_version = self._version

    def forget_node(self, name: str) -> None:
        """Drop the cached view of a deleted node."""
        self._views.pop(name, None)

    def node_view(self, node: dict) -> _NodeView:
        if self._index_version != self._version:
            self._reindex()
        meta = node.get("metadata") or {}
        name = meta.get("name", "")
        labels = meta.get("labels") or {}
        view = self._views.get(name)
        if view is not None and (not self._global or view.labels == labels):
            return view
        # GatherPools: the slices that concern the node, per pool, with its devices there
        relevant: dict[tuple[str, str], list[tuple[PoolInfo, int, list[DeviceInfo]]]] = {}
        for pool, si in self._by_node.get(name, ()):
            relevant.setdefault((pool.driver, pool.name), []).append((pool, si, pool.slice_devices[si]))
        for pool, si in self._global:
            devs = dra_pools.devices_for_node(pool, si, node)
            if devs is None:
                continue
            relevant.setdefault((pool.driver, pool.name), []).append((pool, si, devs))
        for key, entries in relevant.items():  # the counter sets of the node's own pools
            for pool, si in self._counter_slices.get(key, ()):
                entries.append((pool, si, []))
        pools: list[tuple[PoolInfo, list[DeviceInfo]]] = []
        state: dict[int, tuple[bool, str]] = {}
        for key in sorted(relevant):
            found = self._node_pool(key, relevant[key])
            if found is not None:
                pool, devices, complete, invalid = found
                pools.append((pool, devices))
                state[id(pool)] = (complete, invalid)
        remote = [(pool, complete, invalid) for key, pool, complete, invalid in self._remote if key not in relevant]
        view = _NodeView(self._version, dict(labels), pools, state, remote, self.features)
        self._views[name] = view
        return view

    def _node_pool(
        self, key: tuple[str, str], entries: list[tuple[PoolInfo, int, list[DeviceInfo]]]
    ) -> tuple[PoolInfo, list[DeviceInfo], bool, str] | None:
        """GatherPools for one pool: the newest generation among the node's slices; complete
        when those slices are all of it, or else when all of the generation's slices are
        there (None: a newer generation elsewhere makes this one obsolete); invalid judged
        among the node's slices (device names) and the generation's (counter sets)."""
        generation = max(p.generation for p, _, _ in entries)
        mine = sorted((e for e in entries if e[0].generation == generation), key=lambda e: e[1])
        pool = mine[0][0]
        count = int(((pool.slices[mine[0][1]].get("spec") or {}).get("pool") or {}).get("resourceSliceCount", 1))
        complete = len(mine) == count
        if not complete:
            if max(self._gen_pools[key]) > generation:
                return None
            complete = len(pool.slices) == count
        invalid = ""
        if complete:
            if pool.dup_names:
                invalid = dra_pools.duplicate_device_name(pool.slice_devices[si] for _, si, _ in mine)
            invalid = invalid or pool.counter_invalid
        devices = [d for _, _, devs in mine for d in devs]
        return pool, devices, complete, invalid

    # ------------------------------------------------------------------ plans

    def forget_claim(self, uid: str) -> None:
        """The claim is gone: its plan serves no one (a cache keyed by every version of every
        claim ever planned kept 4,096 of them, claim objects included, before it cleared —
        the soak benchmark's scheduler process crept by ~1 MB a minute for over an hour)."""
        self._plans.pop(uid, None)

    def _plan(self, claim: dict) -> _Plan:
        meta = claim.get("metadata") or {}
        uid = meta.get("uid")
        version = (meta.get("namespace"), meta.get("name"), meta.get("resourceVersion"))
        cacheable = uid is not None and version[2] is not None
        if cacheable:
            hit = self._plans.get(uid)
            if hit is not None and hit[0] == version:
                if isinstance(hit[1], str):
                    raise _Fatal(hit[1])
                return hit[1]
        try:
            slots = self._build_plan(claim)
        except _Fatal as exc:
            if cacheable:
                self._remember(uid, version, exc.message)
            raise
        need = _min_devices(slots)
        if need > ALLOCATION_RESULTS_MAX_SIZE:
            msg = (
                f"claim {claim_ref(claim)}: number of requested devices {need} exceeds the claim limit of "
                f"{ALLOCATION_RESULTS_MAX_SIZE}"
            )
            if cacheable:
                self._remember(uid, version, msg)
            raise _Fatal(msg)
        plan = _Plan(claim, slots, _is_simple(claim, slots))
        if cacheable:
            self._remember(uid, version, plan)
        return plan

    def _remember(self, uid: str, version: tuple, plan: "_Plan | str") -> None:
        if uid not in self._plans and len(self._plans) >= 4096:  # callers that never forget
            self._plans.clear()
        self._plans[uid] = (version, plan)

    def _resolve(self, claim: dict, base: str, sub: str, spec: dict, admin: bool) -> _Req:
        ref = claim_ref(claim)
        shown = f"{base}/{sub}" if sub else base
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise _Fatal(f"claim {ref}, request {shown}: missing device class name (unsupported request type?)")
        klass = self._classes.get(class_name)
        if klass is None:
            raise _Fatal(
                f"claim {ref}, request {shown}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        class_exprs = []
        for i, sel in enumerate((klass.get("spec") or {}).get("selectors") or ()):
            expr = (sel.get("cel") or {}).get("expression")
            if expr is None:
                raise _Fatal(f"class {class_name}: selector #{i}: CEL expression empty (unsupported selector type?)")
            try:
                cel.compile_expression(expr)
            except cel.CELError as exc:
                raise _Fatal(f"class {class_name}: selector #{i}: CEL compile error: {exc.message}") from None
            class_exprs.append(expr)
        exprs = []
        for i, sel in enumerate(spec.get("selectors") or ()):
            expr = (sel.get("cel") or {}).get("expression")
            if expr is None:
                raise _Fatal(
                    f"claim {ref}, request {shown}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
            try:
                cel.compile_expression(expr)
            except cel.CELError as exc:
                raise _Fatal(f"claim {ref}: selector #{i}: CEL compile error: {exc.message}") from None
            exprs.append(expr)
        mode = spec.get("allocationMode") or "ExactCount"
        if mode not in ("ExactCount", "All"):
            raise _Fatal(f"claim {ref}, request {shown}: unsupported count mode {mode}")
        count = int(spec.get("count") or 1) if mode == "ExactCount" else 0
        return _Req(
            base=base,
            sub=sub,
            class_name=class_name,
            klass=klass,
            class_exprs=tuple(class_exprs),
            exprs=tuple(exprs),
            mode=mode,
            count=count,
            admin=admin,
            tolerations=list(spec.get("tolerations") or ()),
            capacity=(spec.get("capacity") or {}).get("requests"),
        )

    def _build_plan(self, claim: dict) -> list[_Slot]:
        slots: list[_Slot] = []
        f = self.features
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            name = request.get("name", "")
            if request.get("firstAvailable"):
                if not f.prioritized_list:
                    raise _Fatal(
                        f"claim {claim_ref(claim)}, request {name}: has subrequests, but the DRAPrioritizedList "
                        "feature is disabled"
                    )
                for sub in request["firstAvailable"]:
                    if not f.consumable_capacity and sub.get("capacity") is not None:
                        raise _Fatal(
                            f"claim {claim_ref(claim)}, subrequest {sub.get('name', '')}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                alts = [
                    self._resolve(claim, name, sub.get("name", ""), sub, False) for sub in request["firstAvailable"]
                ]
                slots.append(_Slot(alts, True))
            else:
                exact = request.get("exactly") or {}
                if not f.admin_access and exact.get("adminAccess"):
                    raise _Fatal(
                        f"claim {claim_ref(claim)}, request {name}: admin access is requested, but the feature is "
                        "disabled"
                    )
                if not f.consumable_capacity and exact.get("capacity") is not None:
                    raise _Fatal(
                        f"claim {claim_ref(claim)}, request {name}: has capacity requests, but the "
                        "DRAConsumableCapacity feature is disabled"
                    )
                slots.append(_Slot([self._resolve(claim, name, "", exact, bool(exact.get("adminAccess")))], False))
        return slots

    # ------------------------------------------------------------------ allocate

    def allocate(
        self,
        claims: list[dict],
        node: dict,
        state: AllocatedState,
        now: str,
        new_share_id: Callable[[], str] | None = None,
        interrupt: Callable[[], bool] | None = None,
    ) -> AllocationOutcome:
        """Allocate all `claims` (unallocated ResourceClaims) on `node` given `state`.

        `now` (RFC 3339) is kept for callers; nothing in a result carries it (the
        scheduler's PreBind sets allocationTimestamp, as upstream's);
        `new_share_id` makes shareIDs deterministic in tests (default: uuid4).
        `interrupt` is asked at every step of the search (upstream checks its context
        there): True ends the attempt with an ``interrupted`` outcome. The allocator has
        no clock of its own; the caller's interrupt carries the deadline."""
        try:
            plans = self._last_plans  # the scheduler asks about the same claim objects for every node
            if (
                plans is None
                or len(plans) != len(claims)
                or (
                    plans[0].claim is not claims[0]
                    if len(claims) == 1
                    else any(p.claim is not c for p, c in zip(plans, claims))
                )
            ):
                plans = [self._plan(c) for c in claims]
                self._last_plans = plans
                self._last_simple = all(p.simple for p in plans)
            view = None
            if self._index_version == self._version and not self._global:  # node_view's cache hit, inline
                view = self._views.get((node.get("metadata") or {}).get("name", ""))
            if view is None:
                view = self.node_view(node)
            if self._last_simple:
                fast = _fast_path(plans, view, node, state, now)
                if fast is not None:
                    return fast
            search = _Search(self, plans, view, node, state, new_share_id or (lambda: str(uuid.uuid4())), interrupt)
            found = False
            if view.has_binding:
                search.allow_binding = False
                found = search.run()
                search.allow_binding = True
            if not found:
                found = search.run()
        except _Fatal as exc:
            return AllocationOutcome(reason=exc.message, fatal=True, cel_errors=[exc.message] if exc.is_cel else [])
        except cap.CapacityRequestError as exc:
            return AllocationOutcome(reason=str(exc), fatal=True)
        except _Interrupted:
            return AllocationOutcome(reason="interrupted", interrupted=True)
        if not found:
            return _failure(view)
        results = search.build_results(now)
        return AllocationOutcome(results=results, subrequests=search.chosen_names())


def _min_devices(slots: list[_Slot]) -> int:
    """Upstream's lower bound on a claim's results, checked before searching: ExactCount
    requests count fully, firstAvailable their smallest alternative, All nothing yet."""
    total = 0
    for slot in slots:
        counts = [alt.count if alt.mode == "ExactCount" else 0 for alt in slot.alts]
        total += min(counts) if counts else 0
    return total


def _failure(view: _NodeView) -> AllocationOutcome:
    """No solution: upstream's error when one of the node's pools is invalid (the reason
    only in its log), else "cannot allocate all claims"."""
    if any(invalid for _, invalid in view.state.values()) or any(invalid for _, _, invalid in view.remote):
        return AllocationOutcome(reason=REASON_INVALID_POOLS)
    return AllocationOutcome(reason=REASON_CANNOT_ALLOCATE)


def _fast_path(
    plans: list[_Plan], view: _NodeView, node: dict, state: AllocatedState, now: str
) -> AllocationOutcome | None:
    """Greedy pass for plain requests over plain devices (no taints, counters, sharing or
    binding conditions). Depth-first search would find exactly this first solution; None
    means "run the full search" (a non-plain device was met, or greedy failed where
    backtracking might still succeed)."""
    in_use = state.devices
    if len(plans) == 1:
        req = plans[0].single
        if req is not None:  # the common case: one device for one request
            cands = view.plain.get(req.key, _MISS)
            if cands is _MISS:
                cands = _plain_candidates(view, plans[0], req)
            if cands is not None:
                for dev in cands:
                    if dev.id not in in_use:
                        return _Picked(plans, None, node, now, req, dev)
                return _failure(view)
    taken: set = set()
    picks: list[list[tuple[_Req, DeviceInfo]]] = []
    for plan in plans:
        claim_picks: list[tuple[_Req, DeviceInfo]] = []
        for slot in plan.slots:
            req = slot.alts[0]
            need = req.count
            for dev, error in _candidates(view, plan, req):
                did = dev.id
                if did in in_use or did in taken:
                    continue
                if error is not None or not dev.plain:
                    return None
                taken.add(did)
                claim_picks.append((req, dev))
                need -= 1
                if not need:
                    break
            if need:
                if len(plans) == 1 and len(plan.slots) == 1:
                    return _failure(view)  # nothing to backtrack over
                return None
        picks.append(claim_picks)
    return _fast_outcome(plans, picks, node, now)


_MISS: Any = object()


def _plain_candidates(view: _NodeView, plan: _Plan, req: _Req) -> list[DeviceInfo] | None:
    """The request's candidates on the node if every one is plain and its selectors
    evaluated without error (then the first free ones are the answer), else None."""
    cands = _candidates(view, plan, req)
    out = [dev for dev, error in cands if error is None and dev.plain]
    hit = out if len(out) == len(cands) else None
    view.plain[req.key] = hit
    return hit


def _fast_outcome(
    plans: list[_Plan], picks: list[list[tuple[_Req, DeviceInfo]]], node: dict, now: str
) -> AllocationOutcome:
    return _Picked(plans, picks, node, now)


class _Picked(AllocationOutcome):
    """A fast-path success: the devices picked per claim; results are built on first
    access (Filter runs on every node, only one is chosen) and nothing else is allocated
    per node until then."""

    __slots__ = ("_plans", "_picks", "_node", "_now", "_req", "_dev")

    def __init__(
        self,
        plans: list[_Plan],
        picks: "list[list[tuple[_Req, DeviceInfo]]] | None",
        node: dict,
        now: str,
        req: _Req | None = None,
        dev: DeviceInfo | None = None,
    ) -> None:
        """picks per claim, or (one claim, one device) req and dev."""
        self._results = self._build = None
        self._plans, self._picks, self._node, self._now = plans, picks, node, now
        self._req, self._dev = req, dev
        self.reason = ""
        self.fatal = self.interrupted = False

    @property  # type: ignore[override]
    def ok(self) -> bool:
        return True

    @property  # type: ignore[override]
    def results(self) -> list[dict]:
        if self._results is None:
            picks = self._picks if self._picks is not None else [[(self._req, self._dev)]]
            self._results = _fast_results(self._plans, picks, self._node, self._now)
        return self._results

    @property  # type: ignore[override]
    def cel_errors(self) -> list[str]:
        return []

    @property  # type: ignore[override]
    def subrequests(self) -> list[dict[str, int]]:
        return [{} for _ in self._plans]


def _fast_results(plans: list[_Plan], picks: list[list[tuple[_Req, DeviceInfo]]], node: dict, now: str) -> list[dict]:
    out = []
    for plan, claim_picks in zip(plans, picks):
        results = []
        for req, dev in claim_picks:
            entry: dict[str, Any] = {
                "request": req.full_name,
                "driver": dev.id[0],
                "pool": dev.id[1],
                "device": dev.id[2],
            }
            if req.tolerations:
                entry["tolerations"] = [dict(t) for t in req.tolerations]
            results.append(entry)
        out.append(_allocation(plan, results, [r for r, _ in claim_picks], [d for _, d in claim_picks], node, now))
    return out


def _selectable(plan: _Plan, req: _Req, dev: DeviceInfo) -> bool:
    """Class selectors, then request selectors; _Fatal on a CEL runtime error."""
    err = _match_error(req, dev)
    if err is None:
        return True
    if err is False:
        return False
    raise _Fatal(_cel_message(plan, req, err), True)


def _match_error(req: _Req, dev: DeviceInfo) -> "bool | tuple[bool, int, str] | None":
    """None: matches; False: does not; (is_class, selector index, message): CEL error."""
    for i, expr in enumerate(req.class_exprs):
        try:
            if not dev.matches(expr):
                return False
        except cel.CELError as exc:
            return (True, i, exc.message)
    for i, expr in enumerate(req.exprs):
        try:
            if not dev.matches(expr):
                return False
        except cel.CELError as exc:
            return (False, i, exc.message)
    return None


def _cel_message(plan: _Plan, req: _Req, err: tuple[bool, int, str]) -> str:
    is_class, i, message = err
    if is_class:
        return f"class {req.class_name}: selector #{i}: CEL runtime error: {message}"
    return f"claim {claim_ref(plan.claim)}: selector #{i}: CEL runtime error: {message}"


def _candidates(view: _NodeView, plan: _Plan, req: _Req) -> list[tuple[DeviceInfo, tuple | None]]:
    """(device, CEL error) for usable devices matching the selectors, in pool order.
    A device whose selector errors is kept with its error: it is reported (see
    _cel_message) only if the search reaches that device, as upstream evaluates lazily."""
    cached = view.candidates.get(req.key)
    if cached is None:
        cached = []
        for dev in view.usable:
            err = _match_error(req, dev)
            if err is None:
                cached.append((dev, None))
            elif err is not False:
                cached.append((dev, err))
        view.candidates[req.key] = cached
    return cached


def _allocation(
    plan: _Plan, results: list[dict], reqs: list[_Req], devices: list[DeviceInfo], node: dict, now: str
) -> dict:
    """One status.allocation: results, config (class then claim), node selector. No
    allocationTimestamp: PreBind stamps it when it writes the claim, as upstream's bindClaim
    (upstream's allocator leaves it nil, and its test table expects that)."""
    devs: dict[str, Any] = {"results": results}
    config = _config(plan, reqs)
    if config:
        devs["config"] = config
    allocation: dict[str, Any] = {"devices": devs}
    selector = _node_selector(devices, node)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _config(plan: _Plan, chosen_reqs: list[_Req]) -> list[dict]:
    """Class configs once per class (listing the requests using it), then claim configs
    that apply to all requests or name an allocated request/subrequest."""
    config: list[dict] = []
    by_class: dict[str, tuple[int, int]] = {}
    seen: set[str] = set()
    unique = []
    for req in chosen_reqs:
        if req.full_name not in seen:
            seen.add(req.full_name)
            unique.append(req)
    for req in unique:
        if req.class_name in by_class:
            start, end = by_class[req.class_name]
            for i in range(start, end):
                config[i]["requests"].append(req.full_name)
            continue
        start = len(config)
        for c in (req.klass.get("spec") or {}).get("config") or ():
            entry = dict(c)
            entry["source"] = "FromClass"
            entry["requests"] = [req.full_name]
            config.append(entry)
        by_class[req.class_name] = (start, len(config))
    for c in ((plan.claim.get("spec") or {}).get("devices") or {}).get("config") or ():
        names = c.get("requests") or []
        entry = dict(c)
        entry["source"] = "FromClaim"
        if not names:
            config.append(entry)
            continue
        for req in unique:
            if req.base in names or (req.sub and req.full_name in names):
                config.append(dict(entry))
    return config


def _node_selector(devices: list[DeviceInfo], node: dict) -> dict | None:
    """createNodeSelector: node-local (or bindsToNode) devices pin the node by name;
    otherwise the slices' single-term selectors are merged; None for all-nodes devices."""
    fields: list[dict] = []
    exprs: list[dict] = []
    node_name = (node.get("metadata") or {}).get("name", "")
    for dev in devices:
        spec = dev.slice.get("spec") or {}
        if spec.get("perDeviceNodeSelection"):
            name, selector = dev.device.get("nodeName"), dev.device.get("nodeSelector")
        else:
            name, selector = spec.get("nodeName"), spec.get("nodeSelector")
        if name or dev.binds_to_node:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        terms = (selector or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for src, dst in (
                (terms[0].get("matchFields") or [], fields),
                (terms[0].get("matchExpressions") or [], exprs),
            ):
                for r in src:
                    if not any(_same_requirement(r, x) for x in dst):
                        dst.append(r)
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


class _Search:
    """State of one allocation attempt (upstream's `allocator`)."""

    def __init__(
        self,
        owner: Allocator,
        plans: list[_Plan],
        view: _NodeView,
        node: dict,
        state: AllocatedState,
        new_share_id: Callable[[], str],
        interrupt: Callable[[], bool] | None = None,
    ) -> None:
        self.owner = owner
        self.interrupt = interrupt
        self.plans = plans
        self.view = view
        self.node = node
        self.state = state
        self.new_share_id = new_share_id
        self.allow_binding = True
        self.all_devices: dict[int, list[DeviceInfo]] = {}
        for plan in plans:
            for slot in plan.slots:
                for req in slot.alts:
                    if req.mode == "All":
                        self.all_devices[id(req)] = self._all_for(plan, req)

    def _reset(self) -> None:
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_cap: dict[DeviceID, dict] = {}
        self.counters = CounterTracker(lambda d: self.state.in_use(d.id) or self.state.shared_in_use(d.id))
        self.results: list[list[dict]] = [[] for _ in self.plans]
        self.devices_of: list[list[DeviceInfo]] = [[] for _ in self.plans]
        self.chosen: list[dict[int, int]] = [{} for _ in self.plans]
        self.constraints = []
        for plan in self.plans:
            built = cons.build(((plan.claim.get("spec") or {}).get("devices") or {}).get("constraints"))
            if isinstance(built, str):
                raise _Fatal(f"claim {claim_ref(plan.claim)}, {built}")
            self.constraints.append(built)

    def run(self) -> bool:
        self._reset()
        return self._one(0, 0, 0, 0, False)

    # -- selection

    def _all_for(self, plan: _Plan, req: _Req) -> list[DeviceInfo]:
        ref = claim_ref(plan.claim)
        out = []
        pools = [(pool, devs, *self.view.state[id(pool)]) for pool, devs in self.view.pools]
        if self.view.remote:  # upstream meets them in pool order
            pools = sorted(
                pools + [(pool, [], complete, invalid) for pool, complete, invalid in self.view.remote],
                key=lambda p: (p[0].driver, p[0].name),
            )
        for pool, devs, complete, invalid in pools:
            if not complete:
                raise _Fatal(
                    f"claim {ref}, request {req.full_name}: asks for all devices, but resource pool "
                    f"{pool.pool_id} is currently being updated"
                )
            if invalid:
                raise _Fatal(
                    f"claim {ref}, request {req.full_name}: asks for all devices, but resource pool "
                    f"{pool.pool_id} is currently invalid"
                )
            for dev in devs:
                if _selectable(plan, req, dev):
                    amounts = cap.consumption_for(dev, req.capacity)
                    if amounts is None or not cap.fits(dev, amounts, self.state.capacity.get(dev.id)):
                        continue
                    out.append(dev)
        return out

    # -- recursion

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        if self.interrupt is not None and self.interrupt():
            raise _Interrupted
        if ci >= len(self.plans):
            return True
        plan = self.plans[ci]
        if ri >= len(plan.slots):
            return self._one(ci + 1, 0, 0, 0, False)
        slot = plan.slots[ri]
        if slot.is_sub and not in_sub:
            for s in range(len(slot.alts)):
                if self._one(ci, ri, s, 0, True):
                    self.chosen[ci][ri] = s
                    return True
            return False
        req = slot.alts[si]
        if req.mode == "All":
            devs = self.all_devices[id(req)]
            if not devs:
                return False
            if di >= len(devs):
                return self._one(ci, ri + 1, 0, 0, False)
            if len(self.results[ci]) + len(devs) - di + plan.min_after[ri] > ALLOCATION_RESULTS_MAX_SIZE:
                return False
            undo = self._take(ci, req, devs[di], must=True)
            if undo is None:
                return False
            if self._one(ci, ri, si, di + 1, in_sub):
                return True
            undo()
            return False
        if di >= req.count:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + req.count - di + plan.min_after[ri] > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        state_devices = self.state.devices
        allocating = self.allocating
        for dev, error in _candidates(self.view, plan, req):
            did = dev.id
            if req.admin:
                if ci in allocating.get(did, ()):
                    continue
            elif did in state_devices or allocating.get(did):
                continue
            if error is not None:
                raise _Fatal(_cel_message(plan, req, error), True)
            if not self.allow_binding and dev.binding_conditions:
                continue
            undo = self._take(ci, req, dev, must=False)
            if undo is None:
                continue
            if self._one(ci, ri, si, di + 1, in_sub):
                return True
            undo()
        return False

    def _take(self, ci: int, req: _Req, dev: DeviceInfo, must: bool) -> Callable[[], None] | None:
        """allocateDevice: availability, capacity, counters, taints, constraints; returns
        an undo function when the device was recorded, None when it cannot be used."""
        did = dev.id
        features = self.owner.features
        multi = dev.allow_multiple and features.consumable_capacity
        if req.admin:
            if not multi and ci in self.allocating.get(did, ()):
                return None
        elif did in self.state.devices or self.allocating.get(did):
            return None
        if req.capacity or multi:
            amounts = cap.consumption_for(dev, req.capacity)
            if amounts is None or not cap.fits(
                dev, amounts, self.state.capacity.get(did), self.allocating_cap.get(did)
            ):
                return None
        else:
            amounts = {}  # an exclusive device without capacity requests always fits
        took_counters = False
        if dev.consumes_counters and not (multi and (did in self.state.capacity or did in self.allocating_cap)):
            if not self.counters.try_consume(dev):
                return None
            took_counters = True
        if dev.taints and features.device_taints and taint_prevents_allocation(dev.taints, req.tolerations):
            if took_counters:
                self.counters.release(dev)
            return None
        claim_constraints = self.constraints[ci]
        for i, c in enumerate(claim_constraints):
            if not c.add(req.base, req.sub, dev):
                for e in range(i):
                    claim_constraints[e].remove(req.base, req.sub, dev)
                if took_counters:
                    self.counters.release(dev)
                if must:
                    raise _Fatal(
                        f"claim {claim_ref(self.plans[ci].claim)}, request {req.full_name}: cannot add "
                        f"device {'/'.join(did)} because a claim constraint would not be satisfied"
                    )
                return None
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
        entry: dict[str, Any] = {"request": req.full_name, "driver": did[0], "pool": did[1], "device": did[2]}
        if req.admin:
            entry["adminAccess"] = True
        if req.tolerations:
            entry["tolerations"] = [dict(t) for t in req.tolerations]
        if dev.binding_conditions:
            entry["bindingConditions"] = list(dev.binding_conditions)
        if dev.binding_failure_conditions:
            entry["bindingFailureConditions"] = list(dev.binding_failure_conditions)
        if multi:
            entry["shareID"] = self.new_share_id()
            if amounts:
                entry["consumedCapacity"] = cap.status_names(dev, amounts)
            cap.add_into(self.allocating_cap.setdefault(did, {}), amounts)
        self.results[ci].append(entry)
        self.devices_of[ci].append(dev)

        def undo() -> None:
            for c in claim_constraints:
                c.remove(req.base, req.sub, dev)
            if not multi:
                owners = self.allocating.get(did)
                if owners is not None:
                    owners.discard(ci)
                    if not owners:
                        del self.allocating[did]
            else:
                tally = self.allocating_cap.get(did)
                if tally is not None:
                    cap.sub_from(tally, amounts)
                    if all(v.sign() == 0 for v in tally.values()):
                        del self.allocating_cap[did]
            if took_counters:
                self.counters.release(dev)
            self.results[ci].pop()
            self.devices_of[ci].pop()

        return undo

    # -- results

    def chosen_names(self) -> list[dict[str, int]]:
        out = []
        for plan, chosen in zip(self.plans, self.chosen):
            out.append({plan.slots[ri].alts[0].base: s for ri, s in chosen.items()})
        return out

    def build_results(self, now: str) -> list[dict]:
        out = []
        for ci, plan in enumerate(self.plans):
            reqs = [slot.alts[self.chosen[ci].get(ri, 0)] for ri, slot in enumerate(plan.slots)]
            out.append(_allocation(plan, self.results[ci], reqs, self.devices_of[ci], self.node, now))
        return out


def _same_requirement(a: dict, b: dict) -> bool:
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )
