"""The scheduler's node cache: per node, its allocatable and what assigned pods request.

This is the one ledger of KEP-5517: a pod's requests include the cpu/memory/hugepages/
ephemeral-storage its DRA claims take (``status.nodeAllocatableResourceClaimStatuses``,
through the shared ``PodRequests``), so NodeResourcesFit and DynamicResources both see
what claims hold, and it all goes when the pod goes. Each node also records which pods
use each node-allocatable claim (upstream's ``NodeAllocatableDRAClaimStates``), which is
how the alpha rule "such a claim is not shared between pods" is checked.

Fed by the pod and node informers and by the scheduler itself ("assume": a pod counts on
its node from the moment it is chosen, before the binding reaches the informer), keyed by
pod UID so the informer's later event for the same pod is idempotent.
"""

from __future__ import annotations

from mockkube.scheduler import resources as res
from mockkube.scheduler.podinfo import PodInfo, with_affinity, with_required_anti_affinity


class NodeInfo:
    __slots__ = (
        "name",
        "node",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "requested",
        "pods",
        "generation",
        "real",
        "claim_consumers",
        "with_affinity",
        "images",
        "nonzero",
    )

    def __init__(self, node: dict) -> None:
        self.requested: dict[str, int] = {}
        self.nonzero: dict[str, int] = {}  # cpu and memory with defaults for containers without requests
        self.pods: dict[str, dict] = {}  # uid -> the pod (as assumed or last seen)
        # uid -> PodInfo of the pods here with pod (anti-)affinity (upstream's PodsWithAffinity)
        self.with_affinity: dict[str, PodInfo] = {}
        # (namespace, claim name) -> UIDs of the pods here whose node-allocatable
        # resources come from that claim
        self.claim_consumers: dict[tuple[str, str], set[str]] = {}
        self.generation = 0
        self.real = True
        self.set_node(node)

    def set_node(self, node: dict) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.node = node
        self.name = meta.get("name", "")
        self.labels = meta.get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = res.node_allocatable(node)
        # status.images: every name of each image -> its size (ImageLocality)
        self.images: dict[str, int] = {}
        for img in (node.get("status") or {}).get("images") or ():
            for n in img.get("names") or ():
                self.images[n] = int(img.get("sizeBytes") or 0)
        self.generation += 1

    def free(self, name: str) -> int:
        return self.allocatable.get(name, 0) - self.requested.get(name, 0)


def node_allocatable_claims(pod: dict) -> tuple[tuple[str, str], ...]:
    """(namespace, claim name) of each claim in the pod's nodeAllocatableResourceClaimStatuses."""
    entries = (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses") or ()
    if not entries:
        return ()
    ns = (pod.get("metadata") or {}).get("namespace", "")
    return tuple(sorted({(ns, e.get("resourceClaimName", "")) for e in entries if isinstance(e, dict)}))


def _terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class Cache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.node_list: list[NodeInfo] = []
        # uid -> (node, requests, node-allocatable claims it uses, non-zero cpu/memory)
        self._pods: dict[str, tuple[str, dict[str, int], tuple[tuple[str, str], ...], dict[str, int]]] = {}
        # uid -> PodInfo, cluster-wide: pods with pod (anti-)affinity and those with required
        # anti-affinity (InterPodAffinity skips its PreFilter/PreScore when they are empty)
        self.affinity_pods: dict[str, PodInfo] = {}
        self.required_anti_pods: dict[str, PodInfo] = {}
        self.image_nodes: dict[str, int] = {}  # image name -> how many nodes have it

    # nodes ------------------------------------------------------------------
    def set_node(self, node: dict) -> None:
        name = (node.get("metadata") or {}).get("name", "")
        info = self.nodes.get(name)
        if info is None:
            info = NodeInfo(node)
            self.nodes[name] = info
            self.node_list.append(info)
        else:
            if info.real:
                self._count_images(info, -1)
            info.set_node(node)
            if not info.real:
                info.real = True
                self.node_list.append(info)
        self._count_images(info, 1)

    def remove_node(self, name: str) -> None:
        info = self.nodes.pop(name, None)
        if info is not None and info.real:
            self._count_images(info, -1)
            self.node_list = [n for n in self.node_list if n is not info]

    def _count_images(self, info: NodeInfo, delta: int) -> None:
        for n in info.images:
            v = self.image_nodes.get(n, 0) + delta
            if v > 0:
                self.image_nodes[n] = v
            else:
                self.image_nodes.pop(n, None)

    # pods -------------------------------------------------------------------
    def set_pod(self, pod: dict) -> None:
        """Count (or recount) an assigned, non-terminal pod; forget it otherwise."""
        uid = (pod.get("metadata") or {}).get("uid", "")
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or _terminal(pod):
            self.remove_pod(uid)
            return
        requests = res.pod_requests(pod)
        claims = node_allocatable_claims(pod)
        old = self._pods.get(uid)
        # the non-zero amounts change only with the requests (resize), not on status updates
        nonzero = old[3] if old is not None and old[1] == requests else res.non_zero_requests(pod)
        if old is not None:
            if old == (node, requests, claims, nonzero):
                info = self.nodes.get(node)
                if info is not None and info.pods.get(uid) is not pod:
                    self._index(info, uid, pod)  # labels or affinity may have changed
                return
            self.remove_pod(uid)
        self._pods[uid] = (node, requests, claims, nonzero)
        info = self.nodes.get(node)
        if info is None:
            info = NodeInfo({"metadata": {"name": node}})  # pod before node: count it anyway
            info.real = False
            self.nodes[node] = info
        for k, v in requests.items():
            info.requested[k] = info.requested.get(k, 0) + v
        for k, v in nonzero.items():
            info.nonzero[k] = info.nonzero.get(k, 0) + v
        for key in claims:
            info.claim_consumers.setdefault(key, set()).add(uid)
        self._index(info, uid, pod)

    def _index(self, info: NodeInfo, uid: str, pod: dict) -> None:
        info.pods[uid] = pod
        info.generation += 1
        if with_affinity(pod):
            pi = PodInfo(pod)
            info.with_affinity[uid] = self.affinity_pods[uid] = pi
            if with_required_anti_affinity(pod):
                self.required_anti_pods[uid] = pi
            else:
                self.required_anti_pods.pop(uid, None)
        elif uid in self.affinity_pods:
            info.with_affinity.pop(uid, None)
            self.affinity_pods.pop(uid, None)
            self.required_anti_pods.pop(uid, None)

    def remove_pod(self, uid: str) -> None:
        old = self._pods.pop(uid, None)
        if old is None:
            return
        self.affinity_pods.pop(uid, None)
        self.required_anti_pods.pop(uid, None)
        info = self.nodes.get(old[0])
        if info is None:
            return
        for k, v in old[1].items():
            info.requested[k] = info.requested.get(k, 0) - v
        for k, v in old[3].items():
            info.nonzero[k] = info.nonzero.get(k, 0) - v
        for key in old[2]:
            users = info.claim_consumers.get(key)
            if users is not None:
                users.discard(uid)
                if not users:
                    del info.claim_consumers[key]
        info.pods.pop(uid, None)
        info.with_affinity.pop(uid, None)
        info.generation += 1

    def has_pod(self, uid: str) -> bool:
        return uid in self._pods
