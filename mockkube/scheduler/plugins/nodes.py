"""SchedulingGates, NodeName, NodeUnschedulable, NodeAffinity and TaintToleration:
node-property filters with upstream's reasons and scores."""

from __future__ import annotations

from mockkube.machinery.selectors import node_selector_term_matches
from mockkube.machinery.tolerations import tolerated, toleration_matches  # noqa: F401  (used below and by plugins)
from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import NodeInfo

ERR_NODE_NAME = "node(s) didn't match the requested node name"
ERR_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


class SchedulingGates(fw.Plugin):
    """PreEnqueue: a pod with spec.schedulingGates waits until they are all removed."""

    name = "SchedulingGates"

    def pre_enqueue(self, pod):
        gates = (pod.get("spec") or {}).get("schedulingGates") or []
        if gates:
            names = [g.get("name", "") for g in gates]
            return fw.unresolvable(f"waiting for scheduling gates: {names}")
        return None

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.POD, fw.UPDATE_POD_SCHEDULING_GATES_ELIMINATED), gates_eliminated_hint
            )
        ]


class NodeName(fw.Plugin):
    name = "NodeName"

    def pre_filter(self, state, pod):
        return None if (pod.get("spec") or {}).get("nodeName") else fw.Status(fw.SKIP)

    def filter(self, state, pod, node: NodeInfo):
        want = (pod.get("spec") or {}).get("nodeName")
        if want and want != node.name:
            return fw.unresolvable(ERR_NODE_NAME)
        return None

    def events_to_register(self):
        return [fw.ClusterEventWithHint(fw.ClusterEvent(fw.NODE, fw.ADD), node_name_after_node_add)]


class NodeUnschedulable(fw.Plugin):
    name = "NodeUnschedulable"

    def filter(self, state, pod, node: NodeInfo):
        if not node.unschedulable:
            return None
        taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
        if tolerated((pod.get("spec") or {}).get("tolerations") or [], taint):
            return None
        return fw.unresolvable(ERR_UNSCHEDULABLE)

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_TAINT), unschedulable_after_node_change
            ),
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.POD, fw.UPDATE_POD_TOLERATION), unschedulable_after_toleration_change
            ),
        ]


class NodeAffinity(fw.Plugin):
    """spec.nodeSelector and required/preferred node affinity."""

    name = "NodeAffinity"
    weight = 2

    def pre_filter(self, state, pod):
        spec = pod.get("spec") or {}
        affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        state[self.name] = (spec.get("nodeSelector") or {}, required, preferred)
        if not spec.get("nodeSelector") and required is None:
            return fw.Status(fw.SKIP)  # Filter has nothing to check; Score may still run
        return None

    def skip_score(self, state, pod):
        return not state[self.name][2]

    def filter(self, state, pod, node: NodeInfo):
        selector, required, _ = state[self.name]
        labels = node.labels
        for k, v in selector.items():
            if labels.get(k) != v:
                return fw.unresolvable(ERR_AFFINITY)
        if required is not None:
            terms = required.get("nodeSelectorTerms") or []
            if not any(node_selector_term_matches(t or {}, node.node) for t in terms):
                return fw.unresolvable(ERR_AFFINITY)
        return None

    def score(self, state, pod, node: NodeInfo) -> int:
        _, _, preferred = state[self.name]
        total = 0
        for p in preferred:
            if node_selector_term_matches(p.get("preference") or {}, node.node):
                total += int(p.get("weight") or 0)
        return total

    def normalize(self, state, pod, scores):
        if state[self.name][2]:
            fw.normalize_to_max(scores)

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(
                fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_LABEL), node_affinity_after_node_change
            )
        ]


class TaintToleration(fw.Plugin):
    name = "TaintToleration"
    weight = 3

    def pre_filter(self, state, pod):
        tols = (pod.get("spec") or {}).get("tolerations") or []
        prefer = [t for t in tols if (t.get("effect") or "") in ("", "PreferNoSchedule")]
        state[self.name] = (tols, prefer)
        return None

    def filter(self, state, pod, node: NodeInfo):
        if not node.taints:
            return None
        tols = state[self.name][0]
        for taint in node.taints:
            if taint.get("effect") not in ("NoSchedule", "NoExecute"):
                continue
            if not tolerated(tols, taint):
                return fw.unresolvable(
                    f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"
                )
        return None

    def score_nodes(self, state, pod, nodes: list[NodeInfo]) -> dict[str, int]:
        if not any(n.taints for n in nodes):
            return dict.fromkeys([n.name for n in nodes], 0)
        return super().score_nodes(state, pod, nodes)

    def score(self, state, pod, node: NodeInfo) -> int:
        if not node.taints:
            return 0
        prefer = state[self.name][1]
        return sum(1 for t in node.taints if t.get("effect") == "PreferNoSchedule" and not tolerated(prefer, t))

    def normalize(self, state, pod, scores):
        fw.normalize_to_max(scores, reverse=True)

    def events_to_register(self):
        return [
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.NODE, fw.ADD | fw.UPDATE_NODE_TAINT), taint_after_node_change),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.POD, fw.UPDATE_POD_TOLERATION), taint_after_toleration_change),
        ]


# -- queueing hints (EventsToRegister with SchedulerQueueingHints on) ---------------------
def _uid(obj: dict | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("uid", "")


def gates_eliminated_hint(pod: dict, old, new) -> int:
    """SchedulingGates: only the pod's own gates going away can let it in."""
    return fw.QUEUE if _uid(new) == _uid(pod) else fw.QUEUE_SKIP


def node_name_after_node_add(pod: dict, old, new) -> int:
    """NodeName.isSchedulableAfterNodeAdd: the node the pod names appeared."""
    want = (pod.get("spec") or {}).get("nodeName")
    name = ((new or {}).get("metadata") or {}).get("name")
    return fw.QUEUE if not want or want == name else fw.QUEUE_SKIP


def unschedulable_after_node_change(pod: dict, old, new) -> int:
    """NodeUnschedulable: a node added schedulable, or one that stopped being unschedulable."""
    now = bool((new.get("spec") or {}).get("unschedulable"))
    if old is None:
        return fw.QUEUE_SKIP if now else fw.QUEUE
    was = bool((old.get("spec") or {}).get("unschedulable"))
    return fw.QUEUE if was and not now else fw.QUEUE_SKIP


def unschedulable_after_toleration_change(pod: dict, old, new) -> int:
    """NodeUnschedulable: the pod itself now tolerates node.kubernetes.io/unschedulable."""
    if _uid(new) != _uid(pod):
        return fw.QUEUE_SKIP
    taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    return fw.QUEUE if tolerated((new.get("spec") or {}).get("tolerations") or [], taint) else fw.QUEUE_SKIP


def _required_matches(pod: dict, node: dict) -> bool:
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None:
        return any(node_selector_term_matches(t or {}, node) for t in required.get("nodeSelectorTerms") or [])
    return True


def node_affinity_after_node_change(pod: dict, old, new) -> int:
    """NodeAffinity.isSchedulableAfterNodeChange: the node matches now and did not before."""
    if not _required_matches(pod, new):
        return fw.QUEUE_SKIP
    if old is None:
        return fw.QUEUE
    return fw.QUEUE_SKIP if _required_matches(pod, old) else fw.QUEUE


def _untolerated(node: dict, tolerations: list) -> bool:
    for taint in (node.get("spec") or {}).get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerated(tolerations, taint):
            return True
    return False


def taint_after_node_change(pod: dict, old, new) -> int:
    """TaintToleration.isSchedulableAfterNodeChange: an untolerated taint went away."""
    tols = (pod.get("spec") or {}).get("tolerations") or []
    was = True if old is None else _untolerated(old, tols)
    return fw.QUEUE if was and not _untolerated(new, tols) else fw.QUEUE_SKIP


def taint_after_toleration_change(pod: dict, old, new) -> int:
    """TaintToleration.isSchedulableAfterPodTolerationChange: the pod itself got one."""
    return fw.QUEUE if _uid(new) == _uid(pod) else fw.QUEUE_SKIP
