"""GangScheduling (KEP-4671, v1.36): a PodGroup with a ``gang`` policy is scheduled all
together or not at all.

As upstream's ``plugins/gangscheduling``: PreEnqueue keeps a pod out of the active queue
until its PodGroup exists and at least ``minCount`` of the group's pods exist; Permit makes
a pod wait until ``minCount`` pods of its group are scheduled (bound or assumed in this
cycle). The pod group scheduling cycle (``mockkube.scheduler.podgroups``) reads Permit's
verdicts: one success makes the group feasible, otherwise every assumed pod is reverted.

The group state (which pods belong to which group, which are bound) is the scheduler's
``PodGroupState``; this module only judges it, so the upstream test tables run on it as
plain data.
"""

from __future__ import annotations

from typing import Callable

from mockkube.scheduler import framework as fw

NAME = "GangScheduling"
# upstream's permitTimeoutDuration: how long a gang's pods would wait at Permit for a quorum
PERMIT_TIMEOUT = 300.0

WAITING_FOR_MIN_COUNT_TO_APPEAR = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_FOR_MIN_COUNT_SCHEDULED = "waiting for minCount pods from a gang to be scheduled"


def group_name(pod: dict) -> str:
    """spec.schedulingGroup.podGroupName, or "" for a pod in no group."""
    return (((pod.get("spec") or {}).get("schedulingGroup")) or {}).get("podGroupName") or ""


def waiting_for_group(name: str) -> str:
    return f'waiting for pods\'s pod group "{name}" to appear in scheduling queue'


def min_count(pod_group: dict) -> int | None:
    """The gang's minCount, None for a group without a gang policy."""
    gang = ((pod_group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if gang is None:
        return None
    return int(gang.get("minCount") or 0)


class PodGroupState:
    """What the scheduler knows of one group: its pods by uid and which are scheduled."""

    __slots__ = ("all", "scheduled", "assumed")

    def __init__(self) -> None:
        self.all: set[str] = set()  # uids of the group's live pods (pending, assumed or bound)
        self.scheduled: set[str] = set()  # bound (spec.nodeName set)
        self.assumed: set[str] = set()  # assumed in the running cycle

    def all_pods_count(self) -> int:
        return len(self.all)

    def scheduled_pods_count(self) -> int:
        return len(self.scheduled | self.assumed)


class GangScheduling(fw.Plugin):
    name = NAME

    def __init__(
        self,
        get_pod_group: Callable[[str, str], dict | None],
        group_state: Callable[[str, str], PodGroupState],
    ) -> None:
        self.get_pod_group = get_pod_group
        self.group_state = group_state

    def pre_enqueue(self, pod: dict) -> fw.Status | None:
        name = group_name(pod)
        if not name:
            return None
        ns = (pod.get("metadata") or {}).get("namespace", "")
        pg = self.get_pod_group(ns, name)
        if pg is None:
            return fw.unresolvable(waiting_for_group(name))
        want = min_count(pg)
        if want is None:
            return None
        if self.group_state(ns, name).all_pods_count() < want:
            return fw.unresolvable(WAITING_FOR_MIN_COUNT_TO_APPEAR)
        return None

    def permit(self, state: fw.CycleState, pod: dict, node_name: str) -> tuple[fw.Status | None, float]:
        """Success, or Wait with upstream's timeout until minCount pods are scheduled."""
        name = group_name(pod)
        if not name:
            return None, 0.0
        ns = (pod.get("metadata") or {}).get("namespace", "")
        pg = self.get_pod_group(ns, name)
        if pg is None:
            return fw.error(f'failed to get podGroup {ns}/{name}: podgroup.scheduling.k8s.io "{name}" not found'), 0.0
        want = min_count(pg)
        if want is None:
            return None, 0.0
        if self.group_state(ns, name).scheduled_pods_count() < want:
            return fw.Status(fw.WAIT, WAITING_FOR_MIN_COUNT_SCHEDULED), PERMIT_TIMEOUT
        return None, 0.0

    def events_to_register(self):
        return [
            # a new pod (unscheduled or already bound) may be the one that completes a gang;
            # the group a pod names is immutable, so pod updates never matter
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.UNSCHEDULED_POD, fw.ADD), gang_after_pod_added),
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.ASSIGNED_POD, fw.ADD), gang_after_pod_added),
            # the pod's PodGroup appearing (or its minCount changing)
            fw.ClusterEventWithHint(fw.ClusterEvent(fw.POD_GROUP, fw.ADD | fw.UPDATE), gang_after_pod_group_change),
        ]


# -- queueing hints ---------------------------------------------------------------------------
def _namespace(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("namespace", "")


def gang_after_pod_added(pod: dict, old, new) -> int:
    """GangScheduling.isSchedulableAfterPodAdded: a pod of the same group."""
    name = group_name(pod)
    if name and group_name(new) == name and _namespace(new) == _namespace(pod):
        return fw.QUEUE
    return fw.QUEUE_SKIP


def gang_after_pod_group_change(pod: dict, old, new) -> int:
    """GangScheduling.isSchedulableAfterPodGroupAdded / Updated: the pod's own group."""
    m = new.get("metadata") or {}
    if m.get("name") == group_name(pod) and m.get("namespace") == _namespace(pod):
        return fw.QUEUE
    return fw.QUEUE_SKIP
