"""Kubelet admission (pure): does a pod fit the node's allocatable, counting the pods
already admitted there? Requests are the shared `mockkube.machinery.podrequests` (as the
kubelet's predicate admission uses the component-helpers ``PodRequests``), so the
node-allocatable resources a pod's DRA claims take (KEP-5517:
``pod.status.nodeAllocatableResourceClaimStatuses``) count exactly as in the scheduler."""

from __future__ import annotations

from mockkube.dra.extended import is_dra_extended_resource_name
from mockkube.machinery.podrequests import add, amount, pod_requests, resource_list

__all__ = ["admit", "pod_requests"]


def admit(pod: dict, allocatable: dict, running: list[dict], node_labels: dict | None = None) -> tuple[str, str] | None:
    """None when the pod fits; else (reason, message) as the kubelet reports them."""
    sel = (pod.get("spec") or {}).get("nodeSelector") or {}
    labels = node_labels or {}
    if any(labels.get(k) != v for k, v in sel.items()):
        return "NodeAffinity", "Pod was rejected: Predicate NodeAffinity failed"
    pods_cap = amount("pods", allocatable.get("pods", "110"))
    if len(running) + 1 > pods_cap:
        return "OutOfpods", (
            f"Pod was rejected: Node didn't have enough resource: pods, requested: 1, "
            f"used: {len(running)}, capacity: {pods_cap}"
        )
    want = pod_requests(pod)
    used: dict[str, int] = {}
    for p in running:
        add(used, pod_requests(p))
    cap_of = resource_list(allocatable)
    for res in sorted(want):
        req = want[res]
        if req == 0:
            continue
        if res not in allocatable and is_dra_extended_resource_name(res):
            # removeMissingExtendedResources: an extended resource the node does not advertise
            # is not the kubelet's to check (DRA-backed, KEP-5004, or a cluster-level resource).
            continue
        cap = cap_of.get(res, 0)
        u = used.get(res, 0)
        if cap < u + req:
            return f"OutOf{res}", (
                f"Pod was rejected: Node didn't have enough resource: {res}, requested: "
                f"{req}, used: {u}, capacity: {cap}"
            )
    return None
