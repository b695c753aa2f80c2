"""The scheduling framework's vocabulary: status codes, statuses, the per-cycle state and
the plugin base class (kube-scheduler's `framework` package, reduced to what mockkube's
plugins use). Plugins implement only the extension points they need."""

from __future__ import annotations

from typing import Any

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
