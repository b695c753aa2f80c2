"""The scheduling framework's vocabulary: status codes, statuses, the per-cycle state and
the plugin base class (kube-scheduler's `framework` package, reduced to what mockkube's
plugins use). Plugins implement only the extension points they need."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

SUCCESS = 0
ERROR = 1
UNSCHEDULABLE = 2
UNSCHEDULABLE_AND_UNRESOLVABLE = 3
WAIT = 4
SKIP = 5

MAX_NODE_SCORE = 100


class Status:
    """A plugin's verdict: a code and reasons (the reasons feed FailedScheduling)."""

    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: int = SUCCESS, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons = [r for r in reasons if r]
        self.plugin = plugin

    @property
    def ok(self) -> bool:
        return self.code == SUCCESS

    @property
    def rejected(self) -> bool:
        return self.code in (UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def __repr__(self) -> str:
        return f"Status({self.code}, {self.reasons!r}, plugin={self.plugin!r})"


OK = Status()


def unschedulable(*reasons: str) -> Status:
    return Status(UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def error(message: str) -> Status:
    return Status(ERROR, message)


class CycleState(dict):
    """Data plugins share within one scheduling cycle, keyed by plugin name."""


class Plugin:
    """Base class: every extension point is optional; ``None`` from a hook means success."""

    name = "Plugin"
    weight = 0  # score weight; 0 = no Score

    def pre_enqueue(self, pod: dict) -> Status | None:
        return None

    def pre_filter(self, state: CycleState, pod: dict) -> Status | None:
        return None

    def filter(self, state: CycleState, pod: dict, node: Any) -> Status | None:
        return None

    # PreFilterExtensions: a pod counted on (or taken off) ``node`` after PreFilter, as the
    # cache now shows (preemption's dry runs, pods nominated to the node)
    def add_pod(self, state: CycleState, pod: dict, other: dict, node: Any) -> None:
        return None

    def remove_pod(self, state: CycleState, pod: dict, other: dict, node: Any) -> None:
        return None

    def post_filter(self, state: CycleState, pod: dict, statuses: dict[str, Status]) -> Status | None:
        return None

    def skip_score(self, state: CycleState, pod: dict) -> bool:
        """PreScore: True when this plugin would give every node the same score."""
        return False

    def score(self, state: CycleState, pod: dict, node: Any) -> int:
        return 0

    def score_nodes(self, state: CycleState, pod: dict, nodes: list[Any]) -> dict[str, int]:
        """Score on every feasible node, by node name in the order given; plugins may
        override it with a cheaper equivalent of calling `score` per node."""
        return {n.name: self.score(state, pod, n) for n in nodes}

    def normalize(self, state: CycleState, pod: dict, scores: dict[str, int]) -> None:
        return None

    def reserve(self, state: CycleState, pod: dict, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: dict, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: dict, node_name: str) -> tuple[Status | None, float]:
        """Success (None), Wait with a timeout in seconds, or a rejection."""
        return None, 0.0

    def pre_bind(self, state: CycleState, pod: dict, node_name: str) -> Status | None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """EnqueueExtensions: the cluster events that may make a pod this plugin rejected
        schedulable, each with its queueing hint."""
        return []


def has_pod_extensions(plugin: Plugin) -> bool:
    return type(plugin).add_pod is not Plugin.add_pod


def normalize_to_max(scores: dict[str, int], reverse: bool = False) -> None:
    """DefaultNormalizeScore: scale to 0..MAX_NODE_SCORE by the highest score."""
    if not scores:
        return
    top = max(scores.values())
    if top == 0:
        if reverse:
            for k in scores:
                scores[k] = MAX_NODE_SCORE
        return
    for k, v in scores.items():
        s = MAX_NODE_SCORE * v // top
        scores[k] = MAX_NODE_SCORE - s if reverse else s


# -- cluster events and queueing hints (kube-scheduler's fwk.ClusterEvent, ActionType, QueueingHint) --
# ActionType bits, in upstream's order (their names make the event labels of the metrics)
ADD = 1 << 0
DELETE = 1 << 1
UPDATE_NODE_ALLOCATABLE = 1 << 2
UPDATE_NODE_LABEL = 1 << 3
UPDATE_NODE_TAINT = 1 << 4
UPDATE_NODE_CONDITION = 1 << 5
UPDATE_NODE_ANNOTATION = 1 << 6
UPDATE_POD_LABEL = 1 << 7
UPDATE_POD_SCALE_DOWN = 1 << 8
UPDATE_POD_TOLERATION = 1 << 9
UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
ALL = (1 << 12) - 1
UPDATE = ALL & ~(ADD | DELETE)

_ACTION_NAMES = {
    ADD: "Add",
    DELETE: "Delete",
    UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    UPDATE_NODE_LABEL: "UpdateNodeLabel",
    UPDATE_NODE_TAINT: "UpdateNodeTaint",
    UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    UPDATE_POD_LABEL: "UpdatePodLabel",
    UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    UPDATE_POD_TOLERATION: "UpdatePodToleration",
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ALL: "All",
    UPDATE: "Update",
}

# EventResources
POD = "Pod"
ASSIGNED_POD = "AssignedPod"  # incoming events only: a plugin registers POD
UNSCHEDULED_POD = "UnschedulablePod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"
DEVICE_TAINT_RULE = "resource.k8s.io/DeviceTaintRule"
POD_GROUP = "scheduling.k8s.io/PodGroup"
WILDCARD = "*"

QUEUE_SKIP = 0
QUEUE = 1


class ClusterEvent:
    """A change to one kind of object; ``label`` names it in metrics (e.g. "NodeAdd")."""

    __slots__ = ("resource", "action", "custom_label")

    def __init__(self, resource: str, action: int, custom_label: str = "") -> None:
        self.resource = resource
        self.action = action
        self.custom_label = custom_label

    @property
    def label(self) -> str:
        return self.custom_label or f"{self.resource}{_ACTION_NAMES.get(self.action, '')}"

    @property
    def wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ALL

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterEvent) and (self.resource, self.action, self.custom_label) == (
            other.resource,
            other.action,
            other.custom_label,
        )

    def __hash__(self) -> int:
        return hash((self.resource, self.action, self.custom_label))

    def __repr__(self) -> str:
        return f"ClusterEvent({self.label})"


EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(WILDCARD, ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(WILDCARD, ALL, "ForceActivate")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ADD)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, DELETE)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(UNSCHEDULED_POD, ADD)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(UNSCHEDULED_POD, UPDATE)
# labels of queue moves that are not cluster events
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """MatchClusterEvents: ``incoming`` is the same as or more specific than ``registered``
    (a Pod registration matches AssignedPod and UnschedulablePod events)."""
    if registered.wildcard:
        return True
    r = registered.resource
    if not (
        r == WILDCARD or r == incoming.resource or (r == POD and incoming.resource in (ASSIGNED_POD, UNSCHEDULED_POD))
    ):
        return False
    return bool(registered.action & incoming.action) and incoming.action <= registered.action


HintFn = Callable[[dict, Any, Any], int]


class Narrowing:
    """Which parked pods an event can concern, so the queue asks a hint only of those.

    mockkube's, not upstream's (which asks every parked pod; in Go that is cheap, here a
    burst of claims made it quadratic). The plugin vouches: when ``event_keys(old, new)``
    gives keys (None: any pod may care) and none of ``pod_keys(pod)`` is among them, its
    hint answers QueueSkip for that pod. Outcomes are upstream's; only the calls are spared."""

    __slots__ = ("pod_keys", "event_keys")

    def __init__(
        self,
        pod_keys: Callable[[dict], Iterable[Hashable]],
        event_keys: Callable[[Any, Any], Iterable[Hashable] | None],
    ) -> None:
        self.pod_keys = pod_keys
        self.event_keys = event_keys


class ClusterEventWithHint:
    """An event a plugin cares about and its QueueingHintFn (None: always Queue)."""

    __slots__ = ("event", "hint", "narrowing")

    def __init__(self, event: ClusterEvent, hint: HintFn | None = None, narrowing: Narrowing | None = None) -> None:
        self.event = event
        self.hint = hint
        self.narrowing = narrowing


def _labels(obj: dict | None) -> dict:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def node_scheduling_properties_change(new: dict, old: dict) -> list[ClusterEvent]:
    """NodeSchedulingPropertiesChange: the UpdateNodeXYZ events one node update makes."""
    out = []
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    nst, ost = new.get("status") or {}, old.get("status") or {}
    if bool(ns.get("unschedulable")) != bool(os_.get("unschedulable")) and not ns.get("unschedulable"):
        out.append(ClusterEvent(NODE, UPDATE_NODE_TAINT))
    if (nst.get("allocatable") or {}) != (ost.get("allocatable") or {}):
        out.append(ClusterEvent(NODE, UPDATE_NODE_ALLOCATABLE))
    if _labels(new) != _labels(old):
        out.append(ClusterEvent(NODE, UPDATE_NODE_LABEL))
    if (ns.get("taints") or []) != (os_.get("taints") or []):
        out.append(ClusterEvent(NODE, UPDATE_NODE_TAINT))

    def conds(st: dict) -> dict:
        return {c.get("type"): c.get("status") for c in st.get("conditions") or ()}

    if conds(nst) != conds(ost):
        out.append(ClusterEvent(NODE, UPDATE_NODE_CONDITION))
    if ((new.get("metadata") or {}).get("annotations") or {}) != ((old.get("metadata") or {}).get("annotations") or {}):
        out.append(ClusterEvent(NODE, UPDATE_NODE_ANNOTATION))
    return out


def pod_scheduling_properties_change(new: dict, old: dict) -> list[ClusterEvent]:
    """PodSchedulingPropertiesChange: the UpdatePodXYZ events one pod update makes (the
    general Update when none applies), on AssignedPod or UnschedulablePod."""
    from mockkube.scheduler import resources as res

    r = ASSIGNED_POD if (new.get("spec") or {}).get("nodeName") else UNSCHEDULED_POD
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    actions = []
    if _labels(new) != _labels(old):
        actions.append(UPDATE_POD_LABEL)
    if ns != os_ or (new.get("status") or {}).get("nodeAllocatableResourceClaimStatuses") != (
        old.get("status") or {}
    ).get("nodeAllocatableResourceClaimStatuses"):
        old_req, new_req = res.pod_requests(old), res.pod_requests(new)
        if any(name not in new_req or new_req[name] < v for name, v in old_req.items()):
            actions.append(UPDATE_POD_SCALE_DOWN)
    if not ns.get("schedulingGates") and os_.get("schedulingGates"):
        actions.append(UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(ns.get("tolerations") or ()) != len(os_.get("tolerations") or ()):
        actions.append(UPDATE_POD_TOLERATION)
    nst, ost = new.get("status") or {}, old.get("status") or {}
    if nst.get("resourceClaimStatuses") != ost.get("resourceClaimStatuses") or nst.get(
        "extendedResourceClaimStatus"
    ) != ost.get("extendedResourceClaimStatus"):
        actions.append(UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(UPDATE)
    return [ClusterEvent(r, a) for a in actions]
