"""KEP-5517 in the DynamicResources plugin (upstream's nodeallocatabledynamicresources.go):
the node-allocatable resources (cpu, memory, hugepages, ephemeral-storage) a pod's claims
take on one node, checked together with its container requests against that node's
ledger (`mockkube.scheduler.cache.NodeInfo`).

Per node, after the allocator has chosen devices:
1. each claim whose devices map node-allocatable resources gets a
   ``nodeAllocatableResourceClaimStatuses`` entry (claim name, the containers that
   reference it, the resources it takes); fungible claims (firstAvailable) get the
   amounts of the alternative chosen on that node;
2. the pod's effective demand is the shared ``PodRequests`` over the pod with those
   entries (containers + claims once each, pod-level resources taking precedence,
   overhead) and must fit next to what the node's ledger already holds;
3. alpha rules: a node-allocatable claim must be referenced by a container, is not
   shared with another pod, and with pod-level resources the containers plus the claims
   must stay within ``spec.resources.requests``.
"""

from __future__ import annotations

from typing import Callable, Iterable

from mockkube.dra import node_allocatable
from mockkube.machinery import podrequests
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo

ERR_SHARED_BY_MANY = "node allocatable resource claim {} shared by multiple pods"
ERR_SHARED = "node allocatable resource claim {} is already used by another pod"
ERR_UNREFERENCED = "claim {}: node-allocatable resource claim not referenced by any container within the pod"
ERR_POD_LEVEL = (
    "pod level request for {} is insufficient to cover the aggregated container and node-allocatable DRA requests"
)
FIXED_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def check_sharing(pod: dict, node: NodeInfo, claim_names: Iterable[str]) -> fw.Status | None:
    """validateNodeAllocatableDRAClaimSharing: a claim whose resources another pod on this
    node already counts is UnschedulableAndUnresolvable (alpha: no sharing)."""
    if not node.claim_consumers:
        return None
    meta = pod.get("metadata") or {}
    ns, uid = meta.get("namespace", ""), meta.get("uid", "")
    for name in claim_names:
        users = node.claim_consumers.get((ns, name))
        if not users:
            continue
        if len(users) > 1:
            return fw.unresolvable(ERR_SHARED_BY_MANY.format(name))
        if uid not in users:
            return fw.unresolvable(ERR_SHARED.format(name))
    return None


def _containers_by_pod_claim(pod: dict) -> dict[str, list[str]]:
    spec = pod.get("spec") or {}
    out: dict[str, list[str]] = {}
    for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ()):
        for rc in (c.get("resources") or {}).get("claims") or ():
            names = out.setdefault(rc.get("name", ""), [])
            if c.get("name", "") not in names:
                names.append(c.get("name", ""))
    return out


def claim_statuses(
    pod: dict,
    allocated: Iterable[tuple[dict, dict]],
    slices_for: Callable[[dict], list[dict]],
    pod_claim_of: dict[str, str],
) -> list[dict]:
    """buildNodeAllocatableDRAInfo: one entry per (claim, allocation) whose devices map
    node-allocatable resources, sorted by claim name. ``pod_claim_of`` maps a
    ResourceClaim name to the pod.spec.resourceClaims entry naming it."""
    containers = _containers_by_pod_claim(pod)
    out: dict[str, dict] = {}
    for claim, allocation in allocated:
        if not allocation:
            continue
        slices = slices_for(allocation)
        if not slices:
            continue
        amounts = node_allocatable.node_allocatable_demand(allocation, slices)
        if not amounts:
            continue
        name = (claim.get("metadata") or {}).get("name", "")
        out[name] = node_allocatable.claim_status(name, containers.get(pod_claim_of.get(name, ""), []), amounts)
    return [out[k] for k in sorted(out)]


def with_statuses(pod: dict, statuses: list[dict]) -> dict:
    """The pod as it will be assumed: its status carries the entries."""
    copy = dict(pod)
    copy["status"] = dict(pod.get("status") or {})
    copy["status"][podrequests.STATUS_FIELD] = statuses
    return copy


def check_fit(pod: dict, node: NodeInfo, statuses: list[dict], unreferenced_ok: Iterable[str] = ()) -> fw.Status | None:
    """getPodNodeAllocatableResourceFootprint + nodeFitsResources for one node."""
    exempt = set(unreferenced_ok)
    for entry in statuses:
        if not entry.get("containers") and entry["resourceClaimName"] not in exempt:
            return fw.unresolvable(ERR_UNREFERENCED.format(entry["resourceClaimName"]))
    assumed = with_statuses(pod, statuses)
    demand = podrequests.pod_requests(assumed)
    st = check_pod_level(assumed, demand)
    if st is not None:
        return st
    return fits(node, demand)


def check_pod_level(pod: dict, demand: dict[str, int]) -> fw.Status | None:
    """validatePodLevelRequestsCoverDRA: the containers plus the claims (plus overhead)
    may not exceed the pod-level budget they are counted within."""
    if not podrequests.pod_level_requests(pod):
        return None
    without = podrequests.pod_requests(pod, skip_pod_level=True)
    for name in sorted(demand):
        if name in without and without[name] > demand[name]:
            return fw.unresolvable(ERR_POD_LEVEL.format(name))
    return None


def fits(node: NodeInfo, demand: dict[str, int]) -> fw.Status | None:
    """nodeFitsResources: cpu, memory, ephemeral-storage and hugepages against the node's
    allocatable minus its ledger; unresolvable when the pod exceeds the whole node."""
    reasons: list[str] = []
    unresolvable = False
    names = [n for n in FIXED_RESOURCES if demand.get(n, 0) > 0]
    names += sorted(n for n in demand if n.startswith(podrequests.HUGEPAGES_PREFIX))
    for name in names:
        want = demand[name]
        cap = node.allocatable.get(name, 0)
        if want > cap - node.requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > cap
    if not reasons:
        return None
    return fw.unresolvable(*reasons) if unresolvable else fw.unschedulable(*reasons)
