"""NodeResourcesFit: the pod's requests (cpu, memory, ephemeral-storage, pods, extended
resources) against the node's allocatable minus what assigned pods request; scored with
LeastAllocated on cpu and memory. Extended resources backed by DRA (KEP-5004) on a node
that does not advertise them are left to DynamicResources."""

from __future__ import annotations

import math
from typing import Callable

from mockkube.scheduler import framework as fw
from mockkube.scheduler import resources as res
from mockkube.scheduler.cache import NodeInfo

DEFAULT_MILLI_CPU = res.DEFAULT_MILLI_CPU
DEFAULT_MEMORY = res.DEFAULT_MEMORY


class NodeResourcesFit(fw.Plugin):
    name = "NodeResourcesFit"
    weight = 1

    def __init__(self, dra_backed: Callable[[], set[str]] = set) -> None:
        self.dra_backed = dra_backed

    def pre_filter(self, state, pod):
        requests = {k: v for k, v in res.pod_requests(pod).items() if v > 0}
        backed = self.dra_backed() if requests else set()
        state[self.name] = (requests, backed & set(requests))
        return None

    def filter(self, state, pod, node: NodeInfo):
        requests, dra = state[self.name]
        if not requests and len(node.pods) < node.allocatable.get(res.PODS, 0):
            return None  # room for one more pod, nothing else asked
        reasons = []
        allowed = node.allocatable.get(res.PODS, 0)
        if len(node.pods) + 1 > allowed:
            reasons.append("Too many pods")
        alloc = node.allocatable
        used = node.requested
        for name, want in requests.items():
            if name in dra and not alloc.get(name, 0):
                continue  # DRA-backed here (no device plugin offers it): DynamicResources' job
            if want > alloc.get(name, 0) - used.get(name, 0):
                reasons.append(f"Insufficient {name}")
        if reasons:
            return fw.unschedulable(*reasons)
        return None

    def score_nodes(self, state, pod, nodes: list[NodeInfo]) -> dict[str, int]:
        """`score` on every node, with the pod's side computed once. LeastAllocated on
        cpu and memory, both sides counted with the defaults for containers without
        requests (NonZeroRequested), as upstream's default scorer."""
        nonzero = res.non_zero_requests(pod)
        want = [(res.CPU, nonzero[res.CPU]), (res.MEMORY, nonzero[res.MEMORY])]
        out = {}
        for node in nodes:
            total = weights = 0
            alloc, used = node.allocatable, node.nonzero
            for name, amount in want:
                cap = alloc.get(name, 0)
                if cap <= 0:
                    continue  # not allocatable here: left out of the average
                weights += 1
                after = used.get(name, 0) + amount
                if after <= cap:
                    total += (cap - after) * fw.MAX_NODE_SCORE // cap
            out[node.name] = total // weights if weights else 0
        return out

    def score(self, state, pod, node: NodeInfo) -> int:
        return self.score_nodes(state, pod, [node])[node.name]

    def events_to_register(self):
        return [
            # InPlacePodVerticalScaling is on in v1.36: a pod scaled down frees room too
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.POD, fw.DELETE | fw.UPDATE_POD_SCALE_DOWN), fit_after_pod_event),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_ALLOCATABLE),
                lambda pod, old, new: fit_after_node_change(pod, old, new, self.dra_backed()),
            ),
            # KEP-5004: a class can make an extended resource DRA-backed (mockkube's choice)
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.DEVICE_CLASS, fw.ADD | fw.UPDATE)),
        ]


class NodeResourcesBalancedAllocation(fw.Plugin):
    """BalancedAllocation: favours nodes whose requested fractions of the scored resources
    (cpu and memory by default) stay close together after placing the pod, on the pods'
    actual requests (``useRequested``). PreScore returns Skip for a pod requesting none of
    them (a best-effort pod, upstream's #129138), so such pods cost nothing here."""

    name = "NodeResourcesBalancedAllocation"
    weight = 1

    def __init__(self, resources: tuple[str, ...] = (res.CPU, res.MEMORY)) -> None:
        self.resources = resources

    def skip_score(self, state, pod) -> bool:
        requests = res.pod_requests(pod)
        want = [requests.get(r, 0) for r in self.resources]
        if not any(want):
            return True
        state[self.name] = want
        return False

    def score_nodes(self, state, pod, nodes: list[NodeInfo]) -> dict[str, int]:
        want = state[self.name]
        scalar = [r not in (res.CPU, res.MEMORY, res.EPHEMERAL) for r in self.resources]
        out = {}
        for node in nodes:
            fractions = []
            alloc, used = node.allocatable, node.requested
            for r, w, is_scalar in zip(self.resources, want, scalar):
                if is_scalar and w == 0:
                    continue  # an extended resource the pod does not request
                cap = alloc.get(r, 0)
                if cap == 0:
                    continue
                fractions.append(min(1.0, (used.get(r, 0) + w) / cap))
            std = 0.0
            if len(fractions) == 2:
                std = abs((fractions[0] - fractions[1]) / 2)
            elif len(fractions) > 2:
                mean = sum(fractions) / len(fractions)
                std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
            out[node.name] = int((1 - std) * fw.MAX_NODE_SCORE)
        return out

    def score(self, state, pod, node: NodeInfo) -> int:
        return self.score_nodes(state, pod, [node])[node.name]


# -- queueing hints ---------------------------------------------------------------------------
def fit_after_pod_event(pod: dict, old, new) -> int:
    """Fit.isSchedulableAfterPodEvent: an assigned (or nominated) pod deleted, or a pod
    scaled down in a resource this pod asks for (or this pod itself scaled down)."""
    if new is None:
        spec, status = old.get("spec") or {}, old.get("status") or {}
        if not spec.get("nodeName") and not status.get("nominatedNodeName"):
            return fw.QUEUE_SKIP
        return fw.QUEUE
    if (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid"):
        return fw.QUEUE
    if not (new.get("spec") or {}).get("nodeName"):
        return fw.QUEUE_SKIP
    before, after = res.pod_requests(old), res.pod_requests(new)
    for name, want in res.pod_requests(pod).items():
        if want and before.get(name, 0) > after.get(name, 0):
            return fw.QUEUE
    return fw.QUEUE_SKIP


def _fits_empty(pod: dict, node: dict, dra_backed: set[str]) -> bool:
    """isFit: the pod would fit the node if nothing ran there."""
    alloc = res.node_allocatable(node)
    if alloc.get(res.PODS, 0) < 1:
        return False
    for name, want in res.pod_requests(pod).items():
        if want <= 0 or (name in dra_backed and not alloc.get(name, 0)):
            continue
        if want > alloc.get(name, 0):
            return False
    return True


def fit_after_node_change(pod: dict, old, new, dra_backed: set[str] = frozenset()) -> int:
    """Fit.isSchedulableAfterNodeChange: the node fits the pod and, when updated, one of
    the resources the pod asks for (or the pod count) grew."""
    if not _fits_empty(pod, new, set(dra_backed)):
        return fw.QUEUE_SKIP
    if old is None:
        return fw.QUEUE
    before, after = res.node_allocatable(old), res.node_allocatable(new)
    if after.get(res.PODS, 0) > before.get(res.PODS, 0):
        return fw.QUEUE
    for name, want in res.pod_requests(pod).items():
        if want <= 0:
            continue
        if after.get(name, 0) > before.get(name, 0):
            return fw.QUEUE
        if name in dra_backed and name not in after:
            return fw.QUEUE  # left to DynamicResources
    return fw.QUEUE_SKIP
