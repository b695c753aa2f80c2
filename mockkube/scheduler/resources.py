"""Resource arithmetic for the scheduler: a pod's effective requests and a node's
allocatable, as plain ints (cpu in millicores, everything else in units), as upstream's
`resource.PodRequests` computes them (init containers, sidecars, overhead, pod-level
resources, KEP-5517 node-allocatable demand from pod.status)."""

from __future__ import annotations

from functools import lru_cache

from mockkube.machinery.quantity import parse_quantity

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL = "ephemeral-storage"


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


def _add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def _requests(container: dict) -> dict[str, int]:
    return resource_list((container.get("resources") or {}).get("requests"))


def pod_requests(pod: dict) -> dict[str, int]:
    """Effective requests: max(regular + sidecars, each init container + sidecars started
    before it), pod-level resources when set, plus DRA node-allocatable demand recorded in
    status.nodeAllocatableResourceClaimStatuses, plus overhead."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for c in spec.get("containers") or ():
        _add(total, _requests(c))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in spec.get("initContainers") or ():
        req = _requests(c)
        if c.get("restartPolicy") == "Always":
            _add(sidecars, req)
            _max(init_peak, sidecars)
        else:
            step = dict(sidecars)
            _add(step, req)
            _max(init_peak, step)
    _add(total, sidecars)
    _max(total, init_peak)
    pod_level = (spec.get("resources") or {}).get("requests")
    if pod_level:
        for k, v in resource_list(pod_level).items():
            if k in (CPU, MEMORY):
                total[k] = v
    for entry in ((pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses") or ()):
        if pod_level and any(k in pod_level for k in (entry.get("resources") or {})):
            continue  # the pod-level budget already covers it
        _add(total, resource_list(entry.get("resources")))
    _add(total, resource_list(spec.get("overhead")))
    return total


def node_allocatable(node: dict) -> dict[str, int]:
    status = node.get("status") or {}
    return resource_list(status.get("allocatable") or status.get("capacity"))
