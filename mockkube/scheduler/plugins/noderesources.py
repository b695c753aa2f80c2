"""NodeResourcesFit: the pod's requests (cpu, memory, ephemeral-storage, pods, extended
resources) against the node's allocatable minus what assigned pods request; scored with
LeastAllocated on cpu and memory. Extended resources backed by DRA (KEP-5004) on a node
that does not advertise them are left to DynamicResources."""

from __future__ import annotations

from typing import Callable

from mockkube.scheduler import framework as fw
from mockkube.scheduler import resources as res
from mockkube.scheduler.cache import NodeInfo

DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


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
        """`score` on every node, with the pod's side computed once."""
        requests = state[self.name][0]
        want = [
            (name, requests.get(name) or default)
            for name, default in ((res.CPU, DEFAULT_MILLI_CPU), (res.MEMORY, DEFAULT_MEMORY))
        ]
        out = {}
        for node in nodes:
            total = 0
            alloc, used = node.allocatable, node.requested
            for name, amount in want:
                cap = alloc.get(name, 0)
                if cap <= 0:
                    continue
                after = used.get(name, 0) + amount
                if after <= cap:
                    total += (cap - after) * fw.MAX_NODE_SCORE // cap
            out[node.name] = total // 2
        return out

    def score(self, state, pod, node: NodeInfo) -> int:
        requests = state[self.name][0]
        total = 0
        for name, default in ((res.CPU, DEFAULT_MILLI_CPU), (res.MEMORY, DEFAULT_MEMORY)):
            cap = node.allocatable.get(name, 0)
            if cap <= 0:
                continue
            after = node.requested.get(name, 0) + (requests.get(name) or default)
            if after <= cap:
                total += (cap - after) * fw.MAX_NODE_SCORE // cap
        return total // 2
