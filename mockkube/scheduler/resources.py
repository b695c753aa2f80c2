"""Resource arithmetic for the scheduler: a pod's effective requests and a node's
allocatable, as plain ints (cpu in millicores, everything else in units). The pod side is
the shared `mockkube.machinery.podrequests` (upstream's ``resource.PodRequests``: init
containers, sidecars, overhead, pod-level resources, KEP-5517 node-allocatable demand
from pod.status), so the scheduler and the kubelet count the same thing."""

from __future__ import annotations

from mockkube.machinery.podrequests import CPU, MEMORY, amount, pod_requests, resource_list

PODS = "pods"
EPHEMERAL = "ephemeral-storage"

__all__ = ["CPU", "MEMORY", "PODS", "EPHEMERAL", "amount", "resource_list", "pod_requests", "node_allocatable"]


def node_allocatable(node: dict) -> dict[str, int]:
    status = node.get("status") or {}
    return resource_list(status.get("allocatable") or status.get("capacity"))
