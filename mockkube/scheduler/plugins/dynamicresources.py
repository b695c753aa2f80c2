"""DynamicResources: structured DRA allocation at every extension point, as upstream's
plugin (pkg/scheduler/framework/plugins/dynamicresources).

PreEnqueue waits for the pod's claims to exist; PreFilter gathers them (and the special
KEP-5004 claim for DRA-backed extended resources); Filter runs the pure allocator per
node; PostFilter deallocates an allocated claim that keeps the pod off every node;
Score prefers earlier firstAvailable subrequests; Reserve counts the chosen devices as
in flight so no other pod gets them; Unreserve undoes that; PreBind writes the claims
(finalizer, status.allocation, status.reservedFor) and the pod's status fields.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Callable

from mockkube.dra import extended
from mockkube.dra import workloadclaims as wlc
from mockkube.dra.allocator import AllocationOutcome
from mockkube.machinery import errors
from mockkube.machinery.selectors import node_selector_matches
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo
from mockkube.scheduler.dra_manager import DRAManager
from mockkube.scheduler.plugins import bindingconditions as bc
from mockkube.scheduler.plugins import extendedresources as extres
from mockkube.scheduler.plugins import nodeallocatable

FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX = 256
CONFLICT_RETRIES = 5
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_NO_CLAIMS = "no new claims to deallocate"
SPECIAL_CLAIM_NAME = "<extended-resources>"


class ClaimError(Exception):
    """The pod's claims are not (yet) usable; the message is the status reason."""


def claim_names(pod: dict) -> list[tuple[str, str | None, bool]]:
    """(pod claim name, ResourceClaim name or None when none is needed, must check owner)
    per pod.spec.resourceClaims entry (upstream's resourceclaim.Name)."""
    meta = pod.get("metadata") or {}
    statuses = {s.get("name"): s for s in ((pod.get("status") or {}).get("resourceClaimStatuses") or ())}
    out = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        name = pc.get("name", "")
        if pc.get("resourceClaimName"):
            out.append((name, pc["resourceClaimName"], False))
        elif pc.get("resourceClaimTemplateName"):
            st = statuses.get(name)
            if st is None:
                raise ClaimError(f'pod "{meta.get("namespace")}/{meta.get("name")}": ResourceClaim not created yet')
            out.append((name, st.get("resourceClaimName") or None, True))
        else:
            raise ClaimError(
                f'pod "{meta.get("namespace")}/{meta.get("name")}", spec.resourceClaim {name}: API unsupported'
            )
    return out


def is_for_pod(pod: dict, claim: dict) -> bool:
    uid = (pod.get("metadata") or {}).get("uid")
    return any(o.get("uid") == uid for o in (claim.get("metadata") or {}).get("ownerReferences") or ())


def reserved_for_pod(pod: dict, claim: dict) -> bool:
    uid = (pod.get("metadata") or {}).get("uid")
    return any(
        r.get("uid") == uid and r.get("resource") == "pods" and not r.get("apiGroup")
        for r in (claim.get("status") or {}).get("reservedFor") or ()
    )


class _State:
    __slots__ = (
        "claims",
        "to_allocate",
        "selectors",
        "allocations",
        "unavailable",
        "extended",
        "ext_mappings",
        "ext_by_node",
        "demand",
        "reserved",
        "written",
        "ext_created",
        "now",
        "alloc_claims",
        "allocated",
        "pod_claim_of",
        "demand_written",
        "binding_unavailable",
        "ext_index",
        "ext_stale",
        "plain",
        "interrupt",
        "deadline",
        "rejected",
        "group_allocations",
    )

    def __init__(self) -> None:
        self.claims: list[dict] = []  # user claims (and an existing extended claim)
        self.to_allocate: list[int] = []  # indexes into claims
        self.selectors: dict[int, dict] = {}  # allocated claim index -> allocation.nodeSelector
        self.allocations: dict[str, AllocationOutcome] = {}
        self.unavailable: set[int] = set()
        self.extended: dict | None = None  # in-memory special claim (node-independent spec)
        self.ext_mappings: list[dict] = []
        self.ext_by_node: dict[str, tuple[dict | None, list[dict]]] = {}
        self.demand: dict[str, list[dict]] = {}  # node -> nodeAllocatableResourceClaimStatuses
        self.reserved: list[str] = []
        self.written: list[dict] = []  # claims PreBind reserved for the pod
        self.ext_created: dict | None = None
        self.now = ""
        self.alloc_claims: list[dict] = []
        self.allocated: list[tuple[dict, dict]] = []  # claims allocated before this cycle
        # KEP-5729: claim index -> the allocation another pod of the PodGroup reserved in
        # this pod group cycle, not yet written; PreBind writes the same allocation
        self.group_allocations: dict[int, dict] = {}
        self.pod_claim_of: dict[str, str] = {}  # ResourceClaim name -> pod claim name
        self.demand_written = False
        self.binding_unavailable: list[int] = []  # KEP-5007: binding failed or timed out
        self.ext_index: int | None = None  # index in claims of a reused special claim (KEP-5004)
        self.ext_stale: dict | None = None  # a special claim from an earlier cycle to delete
        self.plain = False  # Filter is the allocation alone (no allocated, extended or unavailable claims)
        self.interrupt: Callable[[], bool] | None = None  # the allocator's interrupt, see _Deadline
        self.deadline: _Deadline | None = None  # re-armed at each Filter call
        # PreFilter refused the pod before upstream records the claims in its state (a
        # missing DeviceClass): PostFilter then has no claims to deallocate, as upstream's
        self.rejected = False


class _Deadline:
    """What the allocator asks at each search step: past the filter timeout (wall time, as
    upstream's per-Filter context deadline) or the scheduler stopping. One per scheduling
    cycle, re-armed at every Filter call (cheaper than a closure per node)."""

    __slots__ = ("at", "stopping")

    def __init__(self, stopping: Callable[[], bool]) -> None:
        self.at = 0.0
        self.stopping = stopping

    def __call__(self) -> bool:
        return time.monotonic() > self.at or self.stopping()


class DynamicResources(fw.Plugin):
    name = "DynamicResources"
    weight = 1

    def __init__(
        self,
        dra: DRAManager,
        client: Any,
        now: Callable[[], str],
        filter_timeout: float = 10.0,
        stopping: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] | None = None,
        binding_timeout: float = bc.DEFAULT_BINDING_TIMEOUT,
        metrics: Any = None,
        pod_group_of: Callable[[dict], dict | None] | None = None,
    ) -> None:
        self.dra = dra
        # KEP-5729 (DRAWorkloadResourceClaims on): the PodGroup of a pod, whose claims it shares
        self.pod_group_of = pod_group_of
        self.metrics = metrics
        if metrics is not None:  # served (HELP/TYPE) before the first create
            metrics.counter(extres.CREATES_METRIC, extres.CREATES_HELP, ["status"])
        self.client = client
        self.now = now
        self.filter_timeout = filter_timeout  # upstream DynamicResourcesArgs.filterTimeout; 0 = none
        self.stopping = stopping
        self.clock = clock  # KEP-5007 binding timeout, from allocationTimestamp
        self.binding_timeout = binding_timeout
        self._claims_rt = client.rt("resourceclaims", "resource.k8s.io") if client is not None else None
        self._pods_rt = client.rt("pods") if client is not None else None

    # -- helpers --------------------------------------------------------------------
    def _pod_claims(self, pod: dict) -> list[dict]:
        ns = (pod.get("metadata") or {}).get("namespace", "")
        out = []
        for pod_claim, name, check_owner in claim_names(pod):
            if name is None:
                continue
            claim = self.dra.get_claim(ns, name)
            if claim is None:
                raise ClaimError(f'resourceclaim "{name}" not found')
            if (claim.get("metadata") or {}).get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{name}" is being deleted')
            if check_owner and not is_for_pod(pod, claim) and not self._group_claim(pod, claim):
                raise ClaimError(
                    f"ResourceClaim {ns}/{name} was not created for pod "
                    f"{ns}/{(pod.get('metadata') or {}).get('name')} (pod is not owner)"
                )
            out.append(claim)
        return out

    def _group_claim(self, pod: dict, claim: dict) -> dict | None:
        """The PodGroup through which the pod uses ``claim`` (KEP-5729), else None."""
        if self.pod_group_of is None:
            return None
        pg = self.pod_group_of(pod)
        return pg if pg is not None and wlc.group_claim_for(pod, claim, pg) else None

    def _reserved(self, pod: dict, claim: dict) -> bool:
        """Reserved for the pod, or for the PodGroup the pod shares it with."""
        if reserved_for_pod(pod, claim):
            return True
        return (
            self.pod_group_of is not None
            and wlc.reserved_for_group_of(pod, claim)
            and bool(self._group_claim(pod, claim))
        )

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL | fw.UPDATE_NODE_ALLOCATABLE)
            ),
            # allocation is tracked in ResourceClaims: a claim of the pod's, or one that
            # gave its devices back (mockkube: a deleted KEP-5004 claim too)
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.RESOURCE_CLAIM, fw.ADD | fw.UPDATE | fw.DELETE),
                dra_after_claim_change,
                CLAIM_NARROWING,
            ),
            # the ResourceClaim controller named the pod's generated claims in its status
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.POD, fw.UPDATE_POD_GENERATED_RESOURCE_CLAIM), dra_after_pod_change
            ),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.DEVICE_CLASS, fw.ADD | fw.UPDATE)),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.RESOURCE_SLICE, fw.ADD | fw.UPDATE)),
            # mockkube: an assigned pod deleted gives back the node-allocatable resources
            # (KEP-5517) DynamicResources' Filter counts
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.POD, fw.DELETE), dra_after_pod_deleted),
            # mockkube: a DeviceTaintRule removed may untaint devices
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.DEVICE_TAINT_RULE, fw.DELETE)),
        ]

    def pre_enqueue(self, pod):
        try:
            self._pod_claims(pod)
        except ClaimError as e:
            return fw.unresolvable(str(e))
        return None

    # -- PreFilter ------------------------------------------------------------------
    def pre_filter(self, state, pod):
        s = _State()
        state[self.name] = s
        if self.filter_timeout > 0:
            s.deadline = s.interrupt = _Deadline(self.stopping)
        else:
            s.interrupt = self.stopping
        try:
            s.claims = self._pod_claims(pod)
        except ClaimError as e:
            return fw.unresolvable(str(e))
        existing = extres.find_existing(self.dra, pod)
        if existing is not None:
            st = existing.get("status") or {}
            if st.get("allocation") and not (existing.get("metadata") or {}).get("deletionTimestamp"):
                s.ext_index = len(s.claims)
                s.claims.append(existing)
            else:
                s.ext_stale = existing
        else:
            claim, mappings = extended.extended_resource_claim(
                pod, self.dra.allocator.classes.values(), mapping=self.dra.extended_mapping()
            )
            if claim is not None:
                s.extended, s.ext_mappings = self._special(pod, claim), mappings
        if not s.claims and s.extended is None and s.ext_stale is None:
            return fw.Status(fw.SKIP)
        for i, claim in enumerate(s.claims):
            alloc = (claim.get("status") or {}).get("allocation")
            in_flight = self.dra.in_flight.get((claim.get("metadata") or {}).get("uid", ""))
            if not alloc and in_flight is not None and self._group_claim(pod, claim) is not None:
                alloc = s.group_allocations[i] = in_flight  # shared with the group: allocated once
            if alloc:
                mine = self._reserved(pod, claim)
                if not mine and len((claim.get("status") or {}).get("reservedFor") or ()) >= RESERVED_FOR_MAX:
                    return fw.unresolvable("resourceclaim in use")
                if alloc.get("nodeSelector") is not None:
                    s.selectors[i] = alloc["nodeSelector"]
                s.allocated.append((claim, alloc))
                if self.clock is not None and bc.claim_unavailable(claim, self.clock(), self.binding_timeout):
                    s.binding_unavailable.append(i)
            else:
                uid = (claim.get("metadata") or {}).get("uid", "")
                if uid in self.dra.in_flight:
                    return fw.unresolvable(
                        f"resource claim {claim['metadata'].get('name')} is in the process of being allocated"
                    )
                st = self._check_classes(claim)
                if st is not None:
                    s.rejected = True
                    return st
                s.to_allocate.append(i)
        s.alloc_claims = [s.claims[i] for i in s.to_allocate]
        s.pod_claim_of = {name: pod_claim for pod_claim, name, _ in claim_names(pod) if name}
        s.now = self.now()
        s.plain = (
            not s.binding_unavailable
            and s.ext_stale is None
            and s.ext_index is None
            and not s.selectors
            and s.extended is None
        )
        return None

    def _check_classes(self, claim: dict) -> fw.Status | None:
        """Upstream's PreFilter check of a claim to allocate: every request's (or
        subrequest's) DeviceClass must exist, or the pod waits (unschedulable) for a
        DeviceClass event; a request without a class name is an error."""
        classes = self.dra.allocator.classes
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            name = request.get("name", "")
            if request.get("exactly") is not None:
                targets = [(name, request["exactly"].get("deviceClassName") or "")]
            elif request.get("firstAvailable"):
                targets = [
                    (f"{name}/{sub.get('name', '')}", sub.get("deviceClassName") or "")
                    for sub in request["firstAvailable"]
                ]
            else:
                meta = claim.get("metadata") or {}
                return fw.unresolvable(
                    f"resource claim {meta.get('namespace')}/{meta.get('name')}, request {name}: unknown request type"
                )
            for shown, class_name in targets:
                if not class_name:
                    return fw.error(f"request {shown}: unsupported request type")
                if class_name not in classes:
                    return fw.unresolvable(f"request {shown}: device class {class_name} does not exist")
        return None

    @staticmethod
    def _special(pod: dict, claim: dict) -> dict:
        """Give the in-memory claim an identity the allocator can cache plans under."""
        spec_key = hashlib.sha1(json.dumps(claim["spec"], sort_keys=True).encode()).hexdigest()[:12]
        claim["metadata"]["name"] = SPECIAL_CLAIM_NAME
        claim["metadata"]["uid"] = f"{(pod.get('metadata') or {}).get('uid', '')}-extended"
        claim["metadata"]["resourceVersion"] = spec_key
        return claim

    def _extended_for(self, s: _State, pod: dict, node: NodeInfo) -> tuple[dict | None, list[dict]]:
        """The special claim's spec depends on whether the node's device plugin already
        advertises the resource (then NodeResourcesFit counts it instead)."""
        names = {m["resourceName"] for m in s.ext_mappings}
        if not any(str(node.allocatable.get(n, 0)) != "0" for n in names):
            return s.extended, s.ext_mappings
        hit = s.ext_by_node.get(node.name)
        if hit is None:
            claim, mappings = extended.extended_resource_claim(pod, self.dra.allocator.classes.values(), node.node)
            hit = (self._special(pod, claim) if claim else None, mappings)
            s.ext_by_node[node.name] = hit
        return hit

    # -- Filter ---------------------------------------------------------------------
    def filter(self, state, pod, node: NodeInfo):
        s: _State = state[self.name]
        if s.plain and not node.claim_consumers:  # the common case, per node: straight to allocation
            if s.alloc_claims and not self.dra.any_mappings:
                # ... and nothing but the allocation to check (the rest of _filter_allocate)
                if s.deadline is not None:
                    s.deadline.at = time.monotonic() + self.filter_timeout
                outcome = self.dra.allocator.allocate(
                    s.alloc_claims, node.node, self.dra.state, s.now, interrupt=s.interrupt
                )
                if outcome.fatal or outcome.interrupted or not outcome.ok:
                    return self._rejection(outcome, node)
                s.allocations[node.name] = outcome
                return None
            return self._filter_allocate(s, pod, node)
        if s.binding_unavailable:  # node-independent, so checked once in PreFilter
            s.unavailable.update(s.binding_unavailable)
            return fw.unresolvable(ERR_NOT_AVAILABLE)
        if s.ext_stale is not None:
            return fw.unschedulable(extres.ERR_STALE)
        if s.ext_index is not None:
            mappings = extres.mappings_for(pod, s.claims[s.ext_index], self.dra, node.node)
            if mappings is None:
                s.unavailable.add(s.ext_index)
                return fw.unschedulable(extres.ERR_STALE)
            s.ext_by_node[node.name] = (s.claims[s.ext_index], mappings)
        if s.selectors:
            st = self._filter_allocated(s, pod, node)
            if st is not None:
                return st
        if node.claim_consumers:
            # KEP-5517 alpha: a node-allocatable claim is not shared between pods.
            st = nodeallocatable.check_sharing(pod, node, (c["metadata"]["name"] for c in s.claims))
            if st is not None:
                return st
        return self._filter_allocate(s, pod, node)

    def _rejection(self, outcome: AllocationOutcome, node: NodeInfo) -> fw.Status:
        """Filter's verdict on a failed allocation."""
        if outcome.interrupted:
            if self.stopping():
                return fw.unresolvable("asked by caller to stop allocating devices: scheduler stopping")
            # v1.36: a timeout is an error (retried with backoff), naming the node
            return fw.error(f"node {node.name}: timed out trying to allocate devices")
        if outcome.fatal:
            return fw.error(outcome.reason)
        if not outcome.reason or outcome.reason == ERR_CANNOT_ALLOCATE:
            # v1.36: Unschedulable, so preemption may free devices that victims hold
            return fw.unschedulable(ERR_CANNOT_ALLOCATE)
        return fw.unresolvable(outcome.reason)

    def _filter_allocated(self, s: _State, pod: dict, node: NodeInfo):
        for i, sel in s.selectors.items():
            if not node_selector_matches(sel, node.node):
                s.unavailable.add(i)
                return fw.unresolvable(ERR_NOT_AVAILABLE)
        return None

    def _filter_allocate(self, s: _State, pod: dict, node: NodeInfo):
        claims = s.alloc_claims
        if s.extended is not None:
            ext, _ = self._extended_for(s, pod, node)
            if ext is not None:
                claims = claims + [ext]
        pairs: list[tuple[dict, dict]] = []
        if claims:
            if s.deadline is not None:
                s.deadline.at = time.monotonic() + self.filter_timeout
            outcome = self.dra.allocator.allocate(claims, node.node, self.dra.state, s.now, interrupt=s.interrupt)
            if outcome.fatal or outcome.interrupted or not outcome.ok:
                return self._rejection(outcome, node)
            s.allocations[node.name] = outcome
        if not self.dra.any_mappings or not self.dra.node_maps_allocatable(node.node):
            return None
        if claims:  # results are built lazily: only KEP-5517 nodes need them during Filter
            pairs = list(zip(claims, s.allocations[node.name].results or ()))
        # KEP-5517: what the claims take from this node, checked with the pod's requests
        demand = nodeallocatable.claim_statuses(pod, s.allocated + pairs, self.dra.slices_with_mappings, s.pod_claim_of)
        if demand:
            status = nodeallocatable.check_fit(pod, node, demand, unreferenced_ok=(SPECIAL_CLAIM_NAME,))
            if status is not None:
                return status
            s.demand[node.name] = demand
        return None

    # -- PostFilter -----------------------------------------------------------------
    def post_filter(self, state, pod, statuses):
        s: _State | None = state.get(self.name)
        if s is not None and s.ext_stale is not None:
            try:
                extres.delete(self.client, self._claims_rt, s.ext_stale)
            except errors.APIError as e:
                return fw.error(str(e))
            return fw.unschedulable("deletion of ResourceClaim completed")
        if s is None or s.rejected or (not s.claims and s.extended is None):
            # Upstream runs this PostFilter for every pod, so its reason joins every
            # FailedScheduling message of a pod without claims.
            return fw.unschedulable(ERR_NO_CLAIMS)
        uid = (pod.get("metadata") or {}).get("uid")
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if i == s.ext_index:
                try:
                    extres.delete(self.client, self._claims_rt, claim)
                except errors.APIError as e:
                    return fw.error(str(e))
                return fw.unschedulable("deletion of ResourceClaim completed")
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == uid):
                try:
                    self._write_status(claim, lambda c: _clear(c))
                except errors.APIError as e:
                    return fw.error(str(e))
                return fw.unschedulable("deallocation of ResourceClaim completed")
        return fw.unschedulable("still not schedulable")

    # -- Score ----------------------------------------------------------------------
    def skip_score(self, state, pod):
        s: _State = state[self.name]
        return not any(
            r.get("firstAvailable")
            for i in s.to_allocate
            for r in ((s.claims[i].get("spec") or {}).get("devices") or {}).get("requests") or ()
        )

    def score(self, state, pod, node: NodeInfo) -> int:
        s: _State = state[self.name]
        outcome = s.allocations.get(node.name)
        if outcome is None:
            return 0
        return outcome.score

    def normalize(self, state, pod, scores):
        fw.normalize_to_max(scores)

    # -- Reserve / Unreserve ----------------------------------------------------------
    def reserve(self, state, pod, node_name):
        s: _State = state[self.name]
        outcome = s.allocations.get(node_name)
        if outcome is None:
            return None
        claims = [s.claims[i] for i in s.to_allocate]
        if s.extended is not None:
            ext = s.ext_by_node.get(node_name, (s.extended, None))[0]
            if ext is not None:
                claims.append(ext)
        for claim, result in zip(claims, outcome.results or ()):
            uid = claim["metadata"]["uid"]
            self.dra.reserve(uid, result)
            s.reserved.append(uid)
        return None

    def unreserve(self, state, pod, node_name):
        s: _State | None = state.get(self.name)
        if s is None:
            return
        for uid in s.reserved:
            self.dra.unreserve(uid)
        s.reserved = []
        pod_uid = (pod.get("metadata") or {}).get("uid")
        for claim in s.written:
            try:
                self._write_status(claim, lambda c: _drop_reservation(c, pod_uid))
            except errors.APIError:
                pass
        s.written = []
        if s.demand_written:
            # clearNodeAllocatableResourceClaimStatus: the pod is not going to that node
            m = pod["metadata"]
            try:
                self.client.patch(
                    self._pods_rt,
                    m["namespace"],
                    m["name"],
                    {"status": {"nodeAllocatableResourceClaimStatuses": None}},
                    "merge",
                    "status",
                )
            except errors.APIError:
                pass
            s.demand_written = False
        if s.ext_created is not None:
            try:
                extres.delete(self.client, self._claims_rt, s.ext_created)
            except errors.APIError:
                pass
            s.ext_created = None
            s.ext_by_node.pop("__created__", None)

    # -- PreBind --------------------------------------------------------------------
    def pre_bind(self, state, pod, node_name):
        """Persist the decision; structured so that waiting for binding conditions
        (KEP-5007) can follow the claim writes as a further step."""
        s: _State = state[self.name]
        outcome = s.allocations.get(node_name)
        results = list(outcome.results or ()) if outcome is not None else []
        try:
            for k, i in enumerate(s.to_allocate):
                self._bind_claim(pod, s, s.claims[i], results[k])
            for i, claim in enumerate(s.claims):
                if i not in s.to_allocate and not self._reserved(pod, claim):
                    self._bind_claim(pod, s, claim, s.group_allocations.get(i))
            if s.extended is not None:
                ext, mappings = s.ext_by_node.get(node_name, (s.extended, s.ext_mappings))
                if ext is not None:
                    self._bind_extended(pod, s, ext, mappings, results[len(s.to_allocate)])
            elif s.ext_index is not None:
                s.ext_by_node["__created__"] = s.ext_by_node[node_name]
            self._record_pod_status(pod, s, node_name)
        except errors.APIError as e:
            return fw.error(f"binding claims: {e}")
        return None

    def binding_wait_claims(self, state) -> list[dict]:
        """After PreBind's writes: the pod's claims (as written) when one of them has
        devices with binding conditions, so the binding cycle must wait (KEP-5007)."""
        s: _State | None = state.get(self.name)
        if s is None:
            return []
        written = {c["metadata"]["uid"]: c for c in s.written}
        claims = [written.get(c["metadata"]["uid"], c) for c in s.claims]
        claims += [c for uid, c in written.items() if all(uid != x["metadata"]["uid"] for x in s.claims)]
        return claims if any(bc.has_binding_conditions(c) for c in claims) else []

    def _bind_claim(self, pod: dict, s: _State, claim: dict, allocation: dict | None) -> None:
        group = self._group_claim(pod, claim)
        if group is not None:  # KEP-5729: reserved for the PodGroup, once for all its pods
            ref = wlc.consumer_ref(group)
        else:
            ref = {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
        uid = claim["metadata"]["uid"]
        if allocation is not None:
            claim = self._ensure_finalizer(claim)
        # v1.36 (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on by default):
        # bindClaim stamps every allocation it writes or reserves that has no timestamp yet.
        now = self.now()

        def change(c: dict) -> bool:
            st = c.setdefault("status", {})
            if allocation is not None:
                if st.get("allocation") and _untimed(st["allocation"]) != _untimed(allocation):
                    raise errors.conflict(
                        "resourceclaims",
                        "resource.k8s.io",
                        c["metadata"]["name"],
                        "claim got allocated elsewhere in the meantime",
                    )
                if not st.get("allocation"):  # else another pod of its PodGroup wrote it (KEP-5729)
                    st["allocation"] = dict(allocation)
            elif not st.get("allocation"):
                raise errors.conflict(
                    "resourceclaims", "resource.k8s.io", c["metadata"]["name"], "claim got deallocated in the meantime"
                )
            rf = st.setdefault("reservedFor", [])
            if not any(r.get("uid") == ref["uid"] for r in rf):
                rf.append(dict(ref))
            st["allocation"].setdefault("allocationTimestamp", now)
            return True

        written = self._write_status(claim, change, refresh=False)
        s.written.append(written)
        self.dra.set_claim(written)
        self.dra.unreserve(uid)

    def _current(self, claim: dict) -> dict:
        m = claim["metadata"]
        cur = self.client.read(self._claims_rt, m["namespace"], m["name"])  # live: after a conflict
        if cur is None or cur["metadata"].get("uid") != m.get("uid"):
            raise errors.not_found("resourceclaims", "resource.k8s.io", m["name"])
        return cur

    def _ensure_finalizer(self, claim: dict) -> dict:
        """The claim with the delete-protection finalizer, as written (or as it was when it
        had it). As upstream's bindClaim: the claim we know is tried first, and read
        again only after a conflict."""
        m = claim["metadata"]
        cur = claim
        for attempt in range(CONFLICT_RETRIES):
            if attempt or not cur["metadata"].get("resourceVersion"):
                cur = self._current(claim)
            if FINALIZER in (cur["metadata"].get("finalizers") or []):
                return cur
            upd = dict(cur)
            upd["metadata"] = dict(cur["metadata"])
            upd["metadata"]["finalizers"] = list(cur["metadata"].get("finalizers") or []) + [FINALIZER]
            try:
                written = self.client.update(self._claims_rt, upd)
                self.dra.set_claim(written)
                return written
            except errors.APIError as e:
                if e.code != 409:
                    raise
        raise errors.conflict("resourceclaims", "resource.k8s.io", m["name"], "too many conflicts")

    def _write_status(self, claim: dict, change: Callable[[dict], Any], refresh: bool = True) -> dict:
        """UpdateStatus with re-read and retry on conflict; refresh=False tries the claim
        as given first (upstream's bindClaim: it re-reads only after a conflict)."""
        last: errors.APIError | None = None
        for attempt in range(CONFLICT_RETRIES):
            cur = (
                claim if not (refresh or attempt) and claim["metadata"].get("resourceVersion") else self._current(claim)
            )
            upd = dict(cur)
            upd["status"] = json.loads(json.dumps(cur.get("status") or {}))
            change(upd)
            try:
                return self.client.update_status(self._claims_rt, upd)
            except errors.APIError as e:
                if e.code != 409:
                    raise
                last = e
        raise last  # type: ignore[misc]

    def _bind_extended(self, pod: dict, s: _State, ext: dict, mappings: list[dict], allocation: dict) -> None:
        created = extres.create(self.client, self._claims_rt, self.metrics, ext)
        s.ext_created = created
        self.dra.unreserve(ext["metadata"]["uid"])
        s.reserved = [u for u in s.reserved if u != ext["metadata"]["uid"]]
        self.dra.reserve(created["metadata"]["uid"], allocation)
        s.reserved.append(created["metadata"]["uid"])
        self._bind_claim(pod, s, created, allocation)
        s.ext_mappings = mappings
        s.ext_by_node["__created__"] = (created, mappings)

    def _record_pod_status(self, pod: dict, s: _State, node_name: str) -> None:
        patch: dict = {}
        created = s.ext_by_node.get("__created__")
        if created is not None:
            patch["extendedResourceClaimStatus"] = extended.extended_resource_claim_status(
                created[0]["metadata"]["name"], created[1]
            )
        demand = s.demand.get(node_name)
        if demand:
            if created is not None:
                for entry in demand:
                    if entry["resourceClaimName"] == SPECIAL_CLAIM_NAME:
                        entry["resourceClaimName"] = created[0]["metadata"]["name"]
            patch["nodeAllocatableResourceClaimStatuses"] = demand
        if patch:
            m = pod["metadata"]
            self.client.patch(self._pods_rt, m["namespace"], m["name"], {"status": patch}, "merge", "status")
            s.demand_written = bool(demand)


def _untimed(allocation: dict) -> dict:
    return {k: v for k, v in allocation.items() if k != "allocationTimestamp"}


def _clear(claim: dict) -> None:
    st = claim.setdefault("status", {})
    st.pop("reservedFor", None)
    st.pop("allocation", None)
    st.pop("devices", None)


def _drop_reservation(claim: dict, pod_uid: str) -> None:
    st = claim.setdefault("status", {})
    rf = [r for r in st.get("reservedFor") or () if r.get("uid") != pod_uid]
    if rf:
        st["reservedFor"] = rf
    else:
        st.pop("reservedFor", None)


# -- queueing hints ---------------------------------------------------------------------------
_USED_MAX = 16384
_MISS = object()
_used: dict[tuple[str, str, str, str], frozenset[str] | None] = {}


def _claims_used(pod: dict) -> frozenset[str] | None:
    """The ResourceClaim names a pod uses (None: a template's claim is not created yet).

    Memoised per pod version (its uid and resourceVersion, which no two versions share;
    a pod without them is not memoised): the queue asks this at each of the pod's changes,
    and each claim event asks the hint of the pods that use the claim."""
    meta = pod.get("metadata") or {}
    key = (meta.get("uid"), meta.get("resourceVersion"), meta.get("namespace"), meta.get("name"))
    cacheable = bool(key[0] and key[1])
    if cacheable:
        hit = _used.get(key, _MISS)  # one lookup: another thread's scheduler may clear the memo
        if hit is not _MISS:
            return hit  # type: ignore[return-value]
    names: frozenset[str] | None
    try:
        names = frozenset(n for _, n, _ in claim_names(pod) if n)
    except ClaimError:
        names = None
    else:
        ext = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if ext:
            names |= {ext}
    if cacheable:
        if len(_used) >= _USED_MAX:
            _used.clear()
        _used[key] = names
    return names


def _pod_uses_claim(pod: dict, claim: dict) -> bool:
    """Raises ClaimError when one of the pod's template claims is not created yet."""
    m, pm = claim.get("metadata") or {}, pod.get("metadata") or {}
    if m.get("namespace") != pm.get("namespace"):
        return False
    names = _claims_used(pod)
    if names is None:
        raise ClaimError("ResourceClaim not created yet")
    return m.get("name") in names


def _gave_devices_back(old, new) -> bool:
    """A claim deallocated, or an allocated one deleted: its devices are free for anyone."""
    had = bool(((old or {}).get("status") or {}).get("allocation"))
    return had and not ((new or {}).get("status") or {}).get("allocation")


def dra_after_claim_change(pod: dict, old, new) -> int:
    """DynamicResources.isSchedulableAfterClaimChange: a claim deallocated (or an allocated
    one deleted) frees devices for anyone; otherwise only a claim of the pod's that was
    created or whose status changed."""
    if _gave_devices_back(old, new):
        return fw.QUEUE
    if new is None:
        return fw.QUEUE if extended.is_extended_resource_claim(old) else fw.QUEUE_SKIP
    try:
        uses = _pod_uses_claim(pod, new)
    except ClaimError:  # upstream: only "not schedulable" errors here, nothing to requeue for
        return fw.QUEUE_SKIP
    if not uses:
        return fw.QUEUE_SKIP
    if old is None:
        return fw.QUEUE
    if old.get("status") == new.get("status") and (old.get("metadata") or {}).get("deletionTimestamp") == (
        new.get("metadata") or {}
    ).get("deletionTimestamp"):
        return fw.QUEUE_SKIP  # e.g. a finalizer added
    return fw.QUEUE


def _claim_pod_keys(pod: dict) -> tuple[tuple[str, str], ...]:
    ns = (pod.get("metadata") or {}).get("namespace") or ""
    return tuple((ns, n) for n in _claims_used(pod) or ())


def _claim_event_keys(old, new) -> tuple[tuple[str, str], ...] | None:
    """The claim's own (namespace, name) when dra_after_claim_change can queue only the
    pods that use it; None when it queues anyone (devices given back, a claim deleted)."""
    if new is None or _gave_devices_back(old, new):
        return None
    m = new.get("metadata") or {}
    return ((m.get("namespace") or "", m.get("name")),)


# a claim's change concerns the parked pods that use it, unless it gave devices back
CLAIM_NARROWING = fw.Narrowing(_claim_pod_keys, _claim_event_keys)


def dra_after_pod_change(pod: dict, old, new) -> int:
    """DynamicResources.isSchedulableAfterPodChange: the pod's own generated claims."""
    return (
        fw.QUEUE if (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid") else fw.QUEUE_SKIP
    )


def dra_after_pod_deleted(pod: dict, old, new) -> int:
    """An assigned pod deleted (its node-allocatable demand goes with it)."""
    return fw.QUEUE if (old.get("spec") or {}).get("nodeName") else fw.QUEUE_SKIP
