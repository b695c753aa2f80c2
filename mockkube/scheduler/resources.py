"""Resource arithmetic for the scheduler: a pod's effective requests and a node's
allocatable, as plain ints (cpu in millicores, everything else in units). The pod side is
the shared `mockkube.machinery.podrequests` (upstream's ``resource.PodRequests``: init
containers, sidecars, overhead, pod-level resources, KEP-5517 node-allocatable demand
from pod.status), so the scheduler and the kubelet count the same thing."""

from __future__ import annotations

from mockkube.machinery.podrequests import CPU, MEMORY, amount, pod_requests, resource_list

PODS = "pods"
EPHEMERAL = "ephemeral-storage"
# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what a container without a cpu
# or memory request counts for in scoring (NonMissingContainerRequests)
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {CPU: DEFAULT_MILLI_CPU, MEMORY: DEFAULT_MEMORY}

__all__ = [
    "CPU",
    "MEMORY",
    "PODS",
    "EPHEMERAL",
    "DEFAULT_MILLI_CPU",
    "DEFAULT_MEMORY",
    "NON_ZERO_DEFAULTS",
    "amount",
    "resource_list",
    "pod_requests",
    "non_zero_requests",
    "node_allocatable",
]


def non_zero_requests(pod: dict) -> dict[str, int]:
    """The pod's cpu and memory with the defaults for containers that request none
    (upstream's NonZeroRequested, which LeastAllocated scores on)."""
    req = pod_requests(pod, non_missing=NON_ZERO_DEFAULTS)
    return {CPU: req.get(CPU, 0), MEMORY: req.get(MEMORY, 0)}


def node_allocatable(node: dict) -> dict[str, int]:
    status = node.get("status") or {}
    return resource_list(status.get("allocatable") or status.get("capacity"))
