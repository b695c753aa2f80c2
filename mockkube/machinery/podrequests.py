"""A pod's effective resource requests, as upstream's ``PodRequests``
(k8s.io/component-helpers/resource): the one calculation the scheduler's node ledger,
its Filter plugins and the kubelet's admission share, so they never disagree.

Amounts are plain ints the way the scheduler counts them (cpu in millicores, every other
resource in units rounded up). The order is upstream's "Resource Calculation" (KEP-5517):

1. containers: sum of regular containers and sidecars (restartable init containers),
   at least the peak of each init container plus the sidecars started before it;
2. DRA node-allocatable resources: every ``status.nodeAllocatableResourceClaimStatuses``
   entry added once (one entry per claim, whether or not a container references it);
3. pod-level requests (``spec.resources.requests``) replace the result for each resource
   they name (cpu, memory, hugepages-*): the pod-level budget includes the claims;
4. ``spec.overhead`` added.
"""

from __future__ import annotations

from functools import lru_cache

from mockkube.machinery.quantity import parse_quantity

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"
POD_LEVEL_RESOURCES = (CPU, MEMORY)
STATUS_FIELD = "nodeAllocatableResourceClaimStatuses"


@lru_cache(maxsize=4096)
def _amount(name: str, value: str) -> int:
    try:
        qty = parse_quantity(value)
    except Exception:
        return 0
    return qty.milli_value() if name == CPU else qty.value()


def amount(name: str, value: object) -> int:
    """A quantity as the scheduler counts it (cpu: millicores, rest: rounded-up units)."""
    return _amount(name, str(value))


def resource_list(res: dict | None) -> dict[str, int]:
    return {k: amount(k, v) for k, v in (res or {}).items()}


def add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def is_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in POD_LEVEL_RESOURCES or name.startswith(HUGEPAGES_PREFIX)


def pod_level_requests(pod: dict) -> dict[str, int]:
    """spec.resources.requests restricted to the resources pod-level resources support."""
    req = ((pod.get("spec") or {}).get("resources") or {}).get("requests") or {}
    return {k: amount(k, v) for k, v in req.items() if is_pod_level_resource(k)}


def _requests(c: dict, non_missing: dict[str, int] | None) -> dict[str, int]:
    req = resource_list((c.get("resources") or {}).get("requests"))
    if non_missing:
        for k, v in non_missing.items():
            req.setdefault(k, v)
    return req


def container_requests(pod: dict, non_missing: dict[str, int] | None = None) -> dict[str, int]:
    """AggregateContainerRequests without the DRA part: regular containers and sidecars,
    at least each init container's peak. ``non_missing``: NonMissingContainerRequests, the
    amount a container that does not request a resource counts for it."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        add(total, _requests(c, non_missing))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        req = _requests(c, non_missing)
        if c.get("restartPolicy") == "Always":
            add(total, req)
            add(sidecars, req)
            _max(init_peak, sidecars)
        else:
            step = dict(sidecars)
            add(step, req)
            _max(init_peak, step)
    _max(total, init_peak)
    return total


def dra_requests(pod: dict) -> dict[str, int]:
    """The node-allocatable amounts of all the pod's DRA claims (each claim once)."""
    total: dict[str, int] = {}
    for entry in (pod.get("status") or {}).get(STATUS_FIELD) or ():
        add(total, resource_list((entry or {}).get("resources")))
    return total


def pod_requests(
    pod: dict,
    use_dra_status: bool = True,
    skip_pod_level: bool = False,
    exclude_overhead: bool = False,
    non_missing: dict[str, int] | None = None,
) -> dict[str, int]:
    """PodRequests with UseDRANodeAllocatableResourceClaimStatus (the default here)."""
    total = container_requests(pod, non_missing)
    if use_dra_status:
        add(total, dra_requests(pod))
    if not skip_pod_level:
        total.update(pod_level_requests(pod))
    if not exclude_overhead:
        add(total, resource_list((pod.get("spec") or {}).get("overhead")))
    return total
