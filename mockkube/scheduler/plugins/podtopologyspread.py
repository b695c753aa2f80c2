"""PodTopologySpread: spec.topologySpreadConstraints with upstream v1.36's rules. Filter
for whenUnsatisfiable DoNotSchedule (maxSkew, minDomains, nodeAffinityPolicy (Honor by
default) and nodeTaintsPolicy (Ignore by default); matchLabelKeys reach it merged into
labelSelector by the API server), Score for ScheduleAnyway, with the system default constraints (hostname maxSkew 3, zone maxSkew 5,
ScheduleAnyway) for pods that have none, over the selector of the Services, ReplicaSets,
ReplicationControllers and StatefulSets that select the pod (``default_selector``).

PreFilter returns Skip for a pod without DoNotSchedule constraints and PreScore for a pod
without ScheduleAnyway ones (or, with none, nothing selecting it) before any pod is walked.
"""

from __future__ import annotations

import math
from typing import Callable

from mockkube.machinery.selectors import LabelSelector, label_selector_from_object, node_selector_term_matches
from mockkube.machinery.tolerations import tolerated
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache, NodeInfo

NAME = "PodTopologySpread"
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = 2**31 - 1

# config.v1 systemDefaultConstraints (defaultingType: System, kube-scheduler's default)
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


class Constraint:
    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "node_affinity_policy", "node_taints_policy")

    def __init__(self, c: dict, selector: LabelSelector) -> None:
        self.max_skew = int(c.get("maxSkew") or 0)
        self.topology_key = c.get("topologyKey") or ""
        self.selector = selector
        self.min_domains = int(c.get("minDomains") or 1)
        self.node_affinity_policy = c.get("nodeAffinityPolicy") or HONOR
        self.node_taints_policy = c.get("nodeTaintsPolicy") or IGNORE

    def match_node_inclusion_policies(self, pod: dict, node: NodeInfo) -> bool:
        if self.node_affinity_policy == HONOR and not required_node_affinity_matches(pod, node):
            return False
        if self.node_taints_policy == HONOR:
            tols = (pod.get("spec") or {}).get("tolerations") or []
            for t in node.taints:
                if t.get("effect") in ("NoSchedule", "NoExecute") and not tolerated(tols, t):
                    return False
        return True


def required_node_affinity_matches(pod: dict, node: NodeInfo) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector and required terms."""
    spec = pod.get("spec") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(k) != v:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None:
        terms = required.get("nodeSelectorTerms") or []
        return any(node_selector_term_matches(t or {}, node.node) for t in terms)
    return True


def filter_constraints(raw: list, pod: dict, action: str) -> list[Constraint]:
    # matchLabelKeys are already in labelSelector: the API server merged them at creation
    # (MatchLabelKeysInPodTopologySpreadSelectorMerge), so the scheduler does not
    return [
        Constraint(c, label_selector_from_object(c.get("labelSelector")))
        for c in raw or ()
        if (c.get("whenUnsatisfiable") or "") == action
    ]


def node_labels_match(labels: dict, constraints: list[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def count_pods_match_selector(pods, selector: LabelSelector, ns: str) -> int:
    if selector.empty:
        return 0
    n = 0
    for p in pods:
        m = p.get("metadata") or {}
        if m.get("deletionTimestamp") or m.get("namespace", "") != ns:
            continue
        if selector.matches(m.get("labels") or {}):
            n += 1
    return n


class _FilterState:
    __slots__ = ("constraints", "counts", "_mins")

    def __init__(self, constraints: list[Constraint]) -> None:
        self.constraints = constraints
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self._mins: list[int | None] = [None] * len(constraints)

    def min_match_num(self, i: int) -> int:
        m = self._mins[i]
        if m is None:
            counts = self.counts[i]
            m = self._mins[i] = min(counts.values()) if counts else MAX_INT32
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return m


class PodTopologySpread(fw.Plugin):
    name = NAME
    weight = 2

    def __init__(
        self,
        cache: Cache,
        default_selector: Callable[[dict], LabelSelector | None] = lambda pod: None,
        system_defaulted: bool = True,
    ) -> None:
        self.cache = cache
        self.default_selector = default_selector
        self.system_defaulted = system_defaulted

    def _constraints(self, pod: dict, action: str) -> list[Constraint]:
        raw = (pod.get("spec") or {}).get("topologySpreadConstraints") or []
        if raw:
            return filter_constraints(raw, pod, action)
        if not self.system_defaulted or action != SCHEDULE_ANYWAY:
            return []  # the system defaults are all ScheduleAnyway
        selector = self.default_selector(pod)
        if selector is None or selector.empty:
            return []
        return [Constraint(c, selector) for c in SYSTEM_DEFAULT_CONSTRAINTS]

    # -- PreFilter / Filter --------------------------------------------------------------
    def pre_filter(self, state, pod):
        raw = (pod.get("spec") or {}).get("topologySpreadConstraints")
        if not raw:
            return fw.Status(fw.SKIP)
        try:
            constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        except Exception as e:  # an invalid selector: the API's validation rejects these
            return fw.error(f"obtaining pod's hard topology spread constraints: {e}")
        if not constraints:
            return fw.Status(fw.SKIP)
        s = _FilterState(constraints)
        ns = (pod.get("metadata") or {}).get("namespace", "")
        for node in self.cache.node_list:
            labels = node.labels
            if not node_labels_match(labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.match_node_inclusion_policies(pod, node):
                    continue
                v = labels[c.topology_key]
                s.counts[i][v] = s.counts[i].get(v, 0) + count_pods_match_selector(node.pods.values(), c.selector, ns)
        state[self.name] = s
        return None

    def _update(self, state, pod, other: dict, node: NodeInfo, delta: int) -> None:
        s: _FilterState | None = state.get(self.name)
        if s is None:
            return
        if (other.get("metadata") or {}).get("namespace", "") != (pod.get("metadata") or {}).get("namespace", ""):
            return
        if not node_labels_match(node.labels, s.constraints):
            return
        labels = (other.get("metadata") or {}).get("labels") or {}
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(labels) or not c.match_node_inclusion_policies(pod, node):
                continue
            v = node.labels[c.topology_key]
            s.counts[i][v] = s.counts[i].get(v, 0) + delta
            s._mins[i] = None

    def add_pod(self, state, pod, other, node):
        self._update(state, pod, other, node, 1)

    def remove_pod(self, state, pod, other, node):
        self._update(state, pod, other, node, -1)

    def filter(self, state, pod, node: NodeInfo):
        s: _FilterState = state[self.name]
        labels = (pod.get("metadata") or {}).get("labels") or {}
        for i, c in enumerate(s.constraints):
            v = node.labels.get(c.topology_key)
            if v is None:
                return fw.unresolvable(ERR_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(labels) else 0
            skew = s.counts[i].get(v, 0) + self_match - s.min_match_num(i)
            if skew > c.max_skew:
                return fw.unschedulable(ERR_CONSTRAINTS_NOT_MATCH)
        return None

    # -- PreScore / Score ---------------------------------------------------------------
    def skip_score(self, state, pod) -> bool:
        try:
            constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        except Exception:
            return True
        if not constraints:
            return True
        state[self.name + "/score"] = constraints
        return False

    def score_nodes(self, state, pod, nodes: list[NodeInfo]) -> dict[str, int]:
        """PreScore over the feasible ``nodes`` and the cluster, then Score per node."""
        constraints: list[Constraint] = state[self.name + "/score"]
        require_all = bool((pod.get("spec") or {}).get("topologySpreadConstraints")) or not self.system_defaulted
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for node in nodes:
            if require_all and not node_labels_match(node.labels, constraints):
                ignored.add(node.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME:
                    continue
                counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
            weights.append(math.log(size + 2))
        ns = (pod.get("metadata") or {}).get("namespace", "")
        if any(c.topology_key != HOSTNAME for c in constraints):
            for node in self.cache.node_list:
                if require_all and not node_labels_match(node.labels, constraints):
                    continue
                for i, c in enumerate(constraints):
                    if c.topology_key == HOSTNAME or not c.match_node_inclusion_policies(pod, node):
                        continue
                    v = node.labels.get(c.topology_key, "")
                    if v in counts[i]:
                        counts[i][v] += count_pods_match_selector(node.pods.values(), c.selector, ns)
        state[self.name + "/ignored"] = ignored
        out = {}
        for node in nodes:
            if node.name in ignored:
                out[node.name] = 0
                continue
            score = 0.0
            for i, c in enumerate(constraints):
                v = node.labels.get(c.topology_key)
                if v is None:
                    continue
                if c.topology_key == HOSTNAME:
                    cnt = count_pods_match_selector(node.pods.values(), c.selector, ns)
                else:
                    cnt = counts[i][v]
                score += cnt * weights[i] + (c.max_skew - 1)
            out[node.name] = _round_half_away(score)
        return out

    def score(self, state, pod, node: NodeInfo) -> int:
        return self.score_nodes(state, pod, [node])[node.name]

    def normalize(self, state, pod, scores):
        ignored = state.get(self.name + "/ignored") or set()
        valid = [v for k, v in scores.items() if k not in ignored]
        if not valid:
            for k in scores:
                scores[k] = 0
            return
        lo, hi = min(valid), max(valid)
        for k, v in scores.items():
            if k in ignored:
                scores[k] = 0
            elif hi == 0:
                scores[k] = fw.MAX_NODE_SCORE
            else:
                scores[k] = fw.MAX_NODE_SCORE * (hi + lo - v) // hi

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.POD, fw.ADD | fw.UPDATE_POD_LABEL | fw.UPDATE_POD_TOLERATION | fw.DELETE),
                lambda pod, old, new: spread_after_pod_change(self._constraints(pod, DO_NOT_SCHEDULE), pod, old, new),
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.DELETE | fw.UPDATE_NODE_LABEL | fw.UPDATE_NODE_TAINT),
                lambda pod, old, new: spread_after_node_change(self._constraints(pod, DO_NOT_SCHEDULE), old, new),
            ),
        ]


def _round_half_away(x: float) -> int:
    """Go's math.Round: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


# -- queueing hints ---------------------------------------------------------------------------
def _involved(incoming: dict, pod: dict) -> bool:
    """involvedInTopologySpreading: the pod itself, or an assigned pod of its namespace."""
    im, pm = incoming.get("metadata") or {}, pod.get("metadata") or {}
    if im.get("uid") == pm.get("uid"):
        return True
    return bool((incoming.get("spec") or {}).get("nodeName")) and im.get("namespace") == pm.get("namespace")


def _labels_match(constraints: list[Constraint], labels: dict) -> bool:
    return any(c.selector.matches(labels) for c in constraints)


def spread_after_pod_change(constraints: list[Constraint], pod: dict, old, new) -> int:
    """PodTopologySpread.isSchedulableAfterPodChange over the pod's hard constraints."""
    if (new is not None and not _involved(new, pod)) or (old is not None and not _involved(old, pod)):
        return fw.QUEUE_SKIP

    def labels(p: dict) -> dict:
        return (p.get("metadata") or {}).get("labels") or {}

    if new is not None and old is not None:
        if (
            (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid")
            and (new.get("spec") or {}).get("tolerations") != (old.get("spec") or {}).get("tolerations")
            and any(c.node_taints_policy == HONOR for c in constraints)
        ):
            return fw.QUEUE
        if labels(new) == labels(old):
            return fw.QUEUE_SKIP
        for c in constraints:
            if c.selector.matches(labels(old)) != c.selector.matches(labels(new)):
                return fw.QUEUE
        return fw.QUEUE_SKIP
    if new is not None:
        return fw.QUEUE if _labels_match(constraints, labels(new)) else fw.QUEUE_SKIP
    return fw.QUEUE if _labels_match(constraints, labels(old)) else fw.QUEUE_SKIP


def spread_after_node_change(constraints: list[Constraint], old, new) -> int:
    """PodTopologySpread.isSchedulableAfterNodeChange: a node with every topologyKey
    added or deleted, gaining or losing one, or changing a key's value or its taints."""

    def labels(n: dict) -> dict:
        return (n.get("metadata") or {}).get("labels") or {}

    was = old is not None and node_labels_match(labels(old), constraints)
    now = new is not None and node_labels_match(labels(new), constraints)
    if old is not None and new is not None:
        if was != now:
            return fw.QUEUE
        if now and (
            any(labels(old).get(c.topology_key) != labels(new).get(c.topology_key) for c in constraints)
            or (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints")
        ):
            return fw.QUEUE
        return fw.QUEUE_SKIP
    if new is not None:
        return fw.QUEUE if now else fw.QUEUE_SKIP
    return fw.QUEUE if was else fw.QUEUE_SKIP
