"""InterPodAffinity: required pod affinity and anti-affinity (the incoming pod's and, by
symmetry, the existing pods' anti-affinity) in Filter, preferred terms in Score, with
upstream v1.36's reasons, Skip rules and normalisation.

PreFilter and PreScore return Skip without walking any pod when neither the pod nor any
assigned pod has the terms they look at (the cache keeps the pods with affinity apart);
``add_pod``/``remove_pod`` are upstream's PreFilterExtensions, used by preemption's dry
runs and by pods nominated to a node.
"""

from __future__ import annotations

from typing import Callable

from mockkube.machinery.selectors import NOTHING
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache, NodeInfo
from mockkube.scheduler.podinfo import AffinityTerm, PodInfo, with_affinity

NAME = "InterPodAffinity"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

Pair = tuple[str, str]


def _add(counts: dict[Pair, int], key: Pair, n: int) -> None:
    v = counts.get(key, 0) + n
    if v:
        counts[key] = v
    else:
        counts.pop(key, None)


class _FilterState:
    __slots__ = ("pod_info", "ns_labels", "existing_anti", "affinity", "anti_affinity")

    def __init__(self, pod_info: PodInfo, ns_labels: dict | None) -> None:
        self.pod_info = pod_info
        self.ns_labels = ns_labels
        self.existing_anti: dict[Pair, int] = {}
        self.affinity: dict[Pair, int] = {}
        self.anti_affinity: dict[Pair, int] = {}

    def update_with_pod(self, other: dict, node_labels: dict, multiplier: int) -> None:
        """preFilterState.updateWithPod: count (or uncount) one pod on a node."""
        if with_affinity(other):
            for t in PodInfo(other).required_anti_affinity:
                if t.matches(self.pod_info.pod, self.ns_labels) and t.topology_key in node_labels:
                    _add(self.existing_anti, (t.topology_key, node_labels[t.topology_key]), multiplier)
        terms = self.pod_info.required_affinity
        if terms and all(t.matches(other, None) for t in terms):
            for t in terms:
                if t.topology_key in node_labels:
                    _add(self.affinity, (t.topology_key, node_labels[t.topology_key]), multiplier)
        for t in self.pod_info.required_anti_affinity:
            if t.matches(other, None) and t.topology_key in node_labels:
                _add(self.anti_affinity, (t.topology_key, node_labels[t.topology_key]), multiplier)


class InterPodAffinity(fw.Plugin):
    name = NAME
    weight = 2

    def __init__(
        self,
        cache: Cache,
        namespaces: Callable[[], list[dict]] = list,
        namespace_labels: Callable[[str], dict | None] = lambda ns: None,
        hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
        ignore_preferred_terms_of_existing_pods: bool = False,
    ) -> None:
        self.cache = cache
        self.namespaces = namespaces
        self.namespace_labels = namespace_labels
        self.hard_weight = hard_pod_affinity_weight
        self.ignore_existing_preferred = ignore_preferred_terms_of_existing_pods

    # -- helpers -------------------------------------------------------------------------
    def _merge_namespaces(self, term: AffinityTerm) -> None:
        """mergeAffinityTermNamespacesIfNotEmpty: a namespaceSelector becomes the names it selects."""
        if term.ns_selector.empty:
            return
        for ns in self.namespaces():
            m = ns.get("metadata") or {}
            if term.ns_selector.matches(m.get("labels") or {}):
                term.namespaces.add(m.get("name", ""))
        term.ns_selector = NOTHING

    def _ns_labels(self, pod: dict) -> dict | None:
        return self.namespace_labels((pod.get("metadata") or {}).get("namespace", ""))

    # -- PreFilter / Filter --------------------------------------------------------------
    def pre_filter(self, state, pod):
        aff = (pod.get("spec") or {}).get("affinity") or {}
        has_required = bool(
            ((aff.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))
            or ((aff.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))
        )
        if not has_required and not self.cache.required_anti_pods:
            return fw.Status(fw.SKIP)  # nothing to count: no walk over the pods
        info = PodInfo(pod)
        if info.parse_error:
            return fw.unresolvable(f"parsing pod: {info.parse_error}")
        for t in info.required_affinity:
            self._merge_namespaces(t)
        for t in info.required_anti_affinity:
            self._merge_namespaces(t)
        s = _FilterState(info, self._ns_labels(pod))
        nodes = self.cache.nodes
        # getExistingAntiAffinityCounts: the assigned pods whose required anti-affinity the pod matches
        for uid, other in self.cache.required_anti_pods.items():
            node_name = (other.pod.get("spec") or {}).get("nodeName", "")
            node = nodes.get(node_name)
            if node is None or not node.real:
                continue
            for t in other.required_anti_affinity:
                if t.topology_key in node.labels and t.matches(pod, s.ns_labels):
                    _add(s.existing_anti, (t.topology_key, node.labels[t.topology_key]), 1)
        # getIncomingAffinityAntiAffinityCounts: the assigned pods the pod's own terms match
        if info.required_affinity or info.required_anti_affinity:
            aff_terms, anti_terms = info.required_affinity, info.required_anti_affinity
            for node in self.cache.node_list:
                labels = node.labels
                for other in node.pods.values():
                    if aff_terms and all(t.matches(other, None) for t in aff_terms):
                        for t in aff_terms:
                            if t.topology_key in labels:
                                _add(s.affinity, (t.topology_key, labels[t.topology_key]), 1)
                    for t in anti_terms:
                        if t.topology_key in labels and t.matches(other, None):
                            _add(s.anti_affinity, (t.topology_key, labels[t.topology_key]), 1)
        if not s.existing_anti and not info.required_affinity and not info.required_anti_affinity:
            return fw.Status(fw.SKIP)
        state[self.name] = s
        return None

    def add_pod(self, state, pod, other: dict, node: NodeInfo) -> None:
        s = state.get(self.name)
        if s is not None:
            s.update_with_pod(other, node.labels, 1)

    def remove_pod(self, state, pod, other: dict, node: NodeInfo) -> None:
        s = state.get(self.name)
        if s is not None:
            s.update_with_pod(other, node.labels, -1)

    def filter(self, state, pod, node: NodeInfo):
        s: _FilterState = state[self.name]
        labels = node.labels
        if not _satisfy_pod_affinity(s, labels):
            return fw.unresolvable(ERR_AFFINITY)
        if s.anti_affinity:
            for t in s.pod_info.required_anti_affinity:
                v = labels.get(t.topology_key)
                if v is not None and s.anti_affinity.get((t.topology_key, v), 0) > 0:
                    return fw.unschedulable(ERR_ANTI_AFFINITY)
        if s.existing_anti:
            for kv in labels.items():
                if s.existing_anti.get(kv, 0) > 0:
                    return fw.unschedulable(ERR_EXISTING_ANTI_AFFINITY)
        return None

    # -- PreScore / Score ---------------------------------------------------------------
    def skip_score(self, state, pod) -> bool:
        aff = (pod.get("spec") or {}).get("affinity") or {}
        has_constraints = bool(
            ((aff.get("podAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
            or ((aff.get("podAntiAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
        )
        if not has_constraints and (self.ignore_existing_preferred or not self.cache.affinity_pods):
            return True  # nothing can score: no walk over the pods
        info = PodInfo(pod)
        if info.parse_error:
            return True  # upstream's PreScore errors out; the pod failed PreFilter already
        for wt in info.preferred_affinity:
            self._merge_namespaces(wt.term)
        for wt in info.preferred_anti_affinity:
            self._merge_namespaces(wt.term)
        ns_labels = self._ns_labels(pod)
        topo: dict[str, dict[str, int]] = {}
        if has_constraints:
            work = ((n, n.pods.values()) for n in self.cache.node_list)
        else:
            work = ((n, [pi.pod for pi in n.with_affinity.values()]) for n in self.cache.node_list if n.with_affinity)
        for node, pods in work:
            labels = node.labels
            if not labels:
                continue
            for other in pods:
                self._process_existing_pod(info, ns_labels, other, labels, pod, topo)
        topo = {k: v for k, v in topo.items() if v}
        if not topo:
            return True
        state[self.name + "/score"] = topo
        return False

    def _process_existing_pod(self, info, ns_labels, other, labels, pod, topo) -> None:
        def process(term: AffinityTerm, weight: int, target: dict, target_ns_labels) -> None:
            if term.matches(target, target_ns_labels):
                v = labels.get(term.topology_key)
                if v is not None:
                    values = topo.setdefault(term.topology_key, {})
                    values[v] = values.get(v, 0) + weight

        for wt in info.preferred_affinity:
            process(wt.term, wt.weight, other, None)
        for wt in info.preferred_anti_affinity:
            process(wt.term, -wt.weight, other, None)
        uid = (other.get("metadata") or {}).get("uid", "")
        existing = self.cache.affinity_pods.get(uid)
        if existing is None or existing.pod is not other:
            if not with_affinity(other):
                return
            existing = PodInfo(other)
        if self.hard_weight > 0:
            for t in existing.required_affinity:
                process(t, self.hard_weight, pod, ns_labels)
        for wt in existing.preferred_affinity:
            process(wt.term, wt.weight, pod, ns_labels)
        for wt in existing.preferred_anti_affinity:
            process(wt.term, -wt.weight, pod, ns_labels)

    def score(self, state, pod, node: NodeInfo) -> int:
        topo = state[self.name + "/score"]
        total = 0
        labels = node.labels
        for key, values in topo.items():
            v = labels.get(key)
            if v is not None:
                total += values.get(v, 0)
        return total

    def normalize(self, state, pod, scores):
        if not state.get(self.name + "/score") or not scores:
            return
        lo, hi = min(scores.values()), max(scores.values())
        diff = hi - lo
        for k, v in scores.items():
            scores[k] = int(fw.MAX_NODE_SCORE * ((v - lo) / diff)) if diff > 0 else 0

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.POD, fw.ADD | fw.UPDATE_POD_LABEL | fw.DELETE), affinity_after_pod_change
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL), affinity_after_node_change
            ),
        ]


def _satisfy_pod_affinity(s: _FilterState, labels: dict) -> bool:
    terms = s.pod_info.required_affinity
    pods_exist = True
    for t in terms:
        v = labels.get(t.topology_key)
        if v is None:
            return False  # all topology labels must exist on the node
        if s.affinity.get((t.topology_key, v), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # the first pod of a series with affinity to itself: allowed when no pod matches
        # yet and the pod matches all its own terms
        return not s.affinity and all(t.matches(s.pod_info.pod, None) for t in terms)
    return True


# -- queueing hints ---------------------------------------------------------------------------
def _matches_all(terms: list[AffinityTerm], pod: dict) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def affinity_after_pod_change(pod: dict, old, new) -> int:
    """InterPodAffinity.isSchedulableAfterPodChange (v1.36): the pod's own change; an
    assigned pod added that matches the pod's affinity, updated to match it or to stop
    matching its anti-affinity, or deleted while matching its anti-affinity or while its
    own anti-affinity kept this pod away."""
    uid = (pod.get("metadata") or {}).get("uid")
    other = new if new is not None else old
    if uid and (other.get("metadata") or {}).get("uid") == uid:
        return fw.QUEUE
    if (new is not None and not (new.get("spec") or {}).get("nodeName")) or (
        old is not None and not (old.get("spec") or {}).get("nodeName")
    ):
        return fw.QUEUE_SKIP
    info = PodInfo(pod)
    if info.parse_error:
        return fw.QUEUE
    terms, anti = info.required_affinity, info.required_anti_affinity
    if new is not None and old is not None:
        if not _matches_all(terms, old) and _matches_all(terms, new):
            return fw.QUEUE
        if _matches_all(anti, old) and not _matches_all(anti, new):
            return fw.QUEUE
        return fw.QUEUE_SKIP
    if new is not None:
        return fw.QUEUE if _matches_all(terms, new) else fw.QUEUE_SKIP
    if _matches_all(anti, old):
        return fw.QUEUE
    deleted = PodInfo(old)
    if any(t.matches(pod, None) for t in deleted.required_anti_affinity):
        return fw.QUEUE  # the existing pod's anti-affinity (symmetry) no longer applies
    return fw.QUEUE_SKIP


def affinity_after_node_change(pod: dict, old, new) -> int:
    """InterPodAffinity.isSchedulableAfterNodeChange (v1.36): a node added or relabelled
    with a topologyKey of the pod's affinity (a new value counts); for anti-affinity, any
    node added, or one whose topology value changed or went away."""
    info = PodInfo(pod)
    if info.parse_error:
        return fw.QUEUE
    new_labels = (new.get("metadata") or {}).get("labels") or {}
    old_labels = None if old is None else (old.get("metadata") or {}).get("labels") or {}
    for t in info.required_affinity:
        k = t.topology_key
        if k in new_labels and (old_labels is None or old_labels.get(k) != new_labels[k]):
            return fw.QUEUE
    if old_labels is None:
        if info.required_anti_affinity or not info.required_affinity:
            return fw.QUEUE  # more room for a pod kept apart
        return fw.QUEUE_SKIP
    for t in info.required_anti_affinity:
        k = t.topology_key
        if k in old_labels and old_labels[k] != new_labels.get(k):
            return fw.QUEUE
    return fw.QUEUE_SKIP
