"""Kubelet admission (pure): does a pod fit the node's allocatable, counting the pods
already admitted there and the node-allocatable resources its DRA claims take
(KEP-5517: ``pod.status.nodeAllocatableResourceClaimStatuses``)?"""

from __future__ import annotations

from mockkube.machinery.names import is_extended_resource_name
from mockkube.machinery.quantity import Quantity, parse_quantity

ZERO = parse_quantity("0")


def _add(into: dict[str, Quantity], res: dict | None) -> None:
    for k, v in (res or {}).items():
        into[k] = into.get(k, ZERO) + parse_quantity(v)


def pod_requests(pod: dict) -> dict[str, Quantity]:
    """Effective requests as upstream's PodRequests: max(sum of containers (+ restartable
    init containers), each init container), pod-level resources winning, plus overhead and
    the node-allocatable amounts of DRA claims (each claim once)."""
    spec = pod.get("spec") or {}
    total: dict[str, Quantity] = {}
    sidecars: dict[str, Quantity] = {}
    for c in spec.get("containers") or ():
        _add(total, ((c.get("resources") or {}).get("requests")))
    init_max: dict[str, Quantity] = {}
    for c in spec.get("initContainers") or ():
        req = (c.get("resources") or {}).get("requests") or {}
        if c.get("restartPolicy") == "Always":
            _add(sidecars, req)
            _add(total, req)
            continue
        cur: dict[str, Quantity] = dict(sidecars)
        _add(cur, req)
        for k, v in cur.items():
            if k not in init_max or init_max[k] < v:
                init_max[k] = v
    for k, v in init_max.items():
        if k not in total or total[k] < v:
            total[k] = v
    pod_level = ((spec.get("resources") or {}).get("requests")) or {}
    for k, v in pod_level.items():
        if k in ("cpu", "memory") or k.startswith("hugepages-"):
            total[k] = parse_quantity(v)
    for entry in (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses") or ():
        if k_pod_level := [k for k in (entry.get("resources") or {}) if k in pod_level]:
            rest = {k: v for k, v in entry["resources"].items() if k not in k_pod_level}
            _add(total, rest)
        else:
            _add(total, entry.get("resources"))
    _add(total, spec.get("overhead"))
    return total


def _amount(resource: str, q: Quantity) -> int:
    return q.milli_value() if resource == "cpu" else q.value()


def admit(pod: dict, allocatable: dict, running: list[dict], node_labels: dict | None = None) -> tuple[str, str] | None:
    """None when the pod fits; else (reason, message) as the kubelet reports them."""
    sel = (pod.get("spec") or {}).get("nodeSelector") or {}
    labels = node_labels or {}
    if any(labels.get(k) != v for k, v in sel.items()):
        return "NodeAffinity", "Pod was rejected: Predicate NodeAffinity failed"
    pods_cap = int(parse_quantity(allocatable.get("pods", "110")).value())
    if len(running) + 1 > pods_cap:
        return "OutOfpods", (f"Pod was rejected: Node didn't have enough resource: pods, requested: 1, "
                             f"used: {len(running)}, capacity: {pods_cap}")
    want = pod_requests(pod)
    used: dict[str, Quantity] = {}
    for p in running:
        for k, v in pod_requests(p).items():
            used[k] = used.get(k, ZERO) + v
    for res in sorted(want):
        req = want[res]
        if req.is_zero():
            continue
        if res not in allocatable and is_extended_resource_name(res):
            # removeMissingExtendedResources: an extended resource the node does not advertise
            # is not the kubelet's to check (DRA-backed, KEP-5004, or a cluster-level resource).
            continue
        cap = parse_quantity(allocatable[res]) if res in allocatable else ZERO
        u = used.get(res, ZERO)
        if cap < u + req:
            return f"OutOf{res}", (f"Pod was rejected: Node didn't have enough resource: {res}, requested: "
                                   f"{_amount(res, req)}, used: {_amount(res, u)}, capacity: {_amount(res, cap)}")
    return None
