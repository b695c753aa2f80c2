"""The pod group scheduling cycle (v1.36 ``schedule_one_podgroup.go``, GenericWorkload).

A pod naming a PodGroup (``spec.schedulingGroup.podGroupName``) is not scheduled alone: the
scheduler takes every pending pod of its group out of the queue, orders them by priority
then first attempt, and tries each in turn on one snapshot, assuming and reserving the
feasible ones so the next pod sees them, and asking Permit. One Permit success (for a gang:
``minCount`` pods scheduled) makes the group feasible and every feasible pod goes to its
binding cycle; otherwise every assumed pod is reverted and all go back to the queue,
unschedulable, the feasible ones with "pod group is unschedulable, <Permit's message>".
The PodGroup's ``PodGroupScheduled`` condition records the outcome (never regressing from
True), as upstream's ``updatePodGroupCondition``.

Differences from upstream are in docs/compatibility.md: no preemption is tried for a pod
of a group (upstream's workload-aware preemption is the WorkloadAwarePreemption gate's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkube.machinery import errors, meta
from mockkube.scheduler import framework as fw
from mockkube.scheduler.plugins.gangscheduling import PodGroupState, group_name

if TYPE_CHECKING:
    from mockkube.scheduler.scheduler import Scheduler

log = logging.getLogger("mockkube.scheduler")

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
CONDITION_SCHEDULED = "PodGroupScheduled"


@dataclass
class _PodResult:
    key: str
    pod: dict
    state: fw.CycleState
    node: str | None = None
    failure: str = ""
    is_error: bool = False
    rejected_by: frozenset[str] = frozenset()
    reserved: list[fw.Plugin] = field(default_factory=list)
    permit: fw.Status | None = None
    feasible: bool = False  # passed the scheduling algorithm and Permit (Success or Wait)


def members(sched: Scheduler, key: str, pod: dict) -> list[tuple[str, dict]]:
    """The popped pod and every other pending pod of its group waiting in the queue
    (upstream's PopSpecificPod for each unscheduled pod of the group state)."""
    ns = pod["metadata"]["namespace"]
    name = group_name(pod)
    out = [(key, pod)]
    for other_key in sorted(sched.group_keys.get((ns, name), ())):
        if other_key == key or other_key not in sched.queue.entries or other_key in sched.binding_now_keys():
            continue
        q_ns, _, q_name = other_key.partition("/")
        other = sched.client.get(sched.pods_rt, q_ns, q_name)
        if other is None or group_name(other) != name or not sched.schedulable_pod(other):
            continue
        out.append((other_key, other))
    for k, _ in out[1:]:
        sched.queue.release(k)
    queue = sched.queue.entries

    def order(item: tuple[str, dict]) -> tuple[int, float]:
        k, p = item
        e = queue.get(k)
        return (-int((p.get("spec") or {}).get("priority") or 0), e.added if e is not None else 0.0)

    out.sort(key=order)
    return out


def schedule_group(sched: Scheduler, key: str, pod: dict) -> None:
    """One pod group scheduling cycle for the group of ``pod`` (popped under ``key``)."""
    ns = pod["metadata"]["namespace"]
    name = group_name(pod)
    group = members(sched, key, pod)
    state_of_group = sched.group_states.setdefault((ns, name), PodGroupState())
    results: list[_PodResult] = []
    group_status: fw.Status = fw.Status(fw.UNSCHEDULABLE, POD_GROUP_UNSCHEDULABLE)
    error = ""
    for k, p in group:
        r = _PodResult(k, p, fw.CycleState())
        r.state["__group"] = True
        results.append(r)
        node, failure, is_error = sched._schedule(r.state, p)
        if node is None:
            r.failure, r.is_error = failure, is_error
            r.rejected_by = r.state.get("__rejected_by", frozenset())
            if is_error:
                error = f"failed to schedule other pod from a pod group: {failure}"
                break
            continue
        reserved, failure = sched._assume_and_reserve(p, r.state, node)
        r.node, r.reserved = node, reserved
        state_of_group.assumed.add(p["metadata"]["uid"])
        if failure:
            _revert(sched, r)
            r.failure, r.is_error = failure, True
            error = f"failed to schedule other pod from a pod group: {failure}"
            break
        st, _timeout = sched.run_permit(r.state, p, node)
        if st is not None and st.code not in (fw.SUCCESS, fw.WAIT):
            _revert(sched, r)
            r.failure = st.message
            r.is_error = st.code == fw.ERROR
            r.rejected_by = frozenset((st.plugin,)) if st.plugin else frozenset()
            if r.is_error:
                error = f"failed to schedule other pod from a pod group: {st.message}"
                break
            continue
        r.permit, r.feasible = st, True
        if st is None or st.ok:
            group_status = fw.OK
    # pods going to their binding cycle stay assumed until the informer shows them bound
    # (or back, unbound: Scheduler._track_group), as upstream's cache keeps assumed pods
    bound = {r.pod["metadata"]["uid"] for r in results if r.feasible} if group_status.ok and not error else set()
    state_of_group.assumed &= bound
    if error:
        for r in results:
            _revert(sched, r)
        for k, p in group:
            mine = next((r for r in results if r.key == k), None)
            msg = mine.failure if mine is not None and mine.is_error else error
            sched._fail(k, p, msg, True)
        _set_condition(sched, ns, name, "False", "SchedulerError", error)
        return
    if group_status.ok:
        for r in results:
            if r.node is None:
                sched._fail(r.key, r.pod, r.failure, False, r.rejected_by)
                continue
            r.state.pop("__group", None)
            sched._start_binding(r.key, r.pod, r.state, r.node, r.reserved, "")
        _set_condition(sched, ns, name, "True", "Scheduled", "")
        return
    for r in reversed(results):
        _revert(sched, r)
    for r in results:
        if r.feasible:
            msg = ", ".join(x for x in (POD_GROUP_UNSCHEDULABLE, r.permit.message if r.permit else "") if x)
            sched._fail(r.key, r.pod, msg, False)
        else:
            sched._fail(r.key, r.pod, r.failure, False, r.rejected_by)
    _set_condition(sched, ns, name, "False", "Unschedulable", POD_GROUP_UNSCHEDULABLE)


def _revert(sched: Scheduler, r: _PodResult) -> None:
    """unreserveAndForget: undo Reserve and take the assumed pod off its node."""
    if r.node is None:
        return
    for p in reversed(r.reserved):
        p.unreserve(r.state, r.pod, r.node)
    sched.cache.remove_pod(r.pod["metadata"]["uid"])
    r.node, r.reserved = None, []


def _set_condition(sched: Scheduler, ns: str, name: str, status: str, reason: str, message: str) -> None:
    """updatePodGroupCondition: set PodGroupScheduled unless it would regress from True."""
    rt = sched.client.rt("podgroups", "scheduling.k8s.io")
    pg = sched.get_pod_group(ns, name)
    if pg is None:
        return
    conditions: list[dict[str, Any]] = list((pg.get("status") or {}).get("conditions") or [])
    existing = next((c for c in conditions if c.get("type") == CONDITION_SCHEDULED), None)
    if existing is not None and existing.get("status") == "True" and status != "True":
        return
    gen = (pg.get("metadata") or {}).get("generation") or 0
    cond = {
        "type": CONDITION_SCHEDULED,
        "status": status,
        "observedGeneration": gen,
        "lastTransitionTime": meta.rfc3339(sched.clock()),
        "reason": reason,
        "message": message,
    }
    if existing is not None:
        if existing.get("status") == status:
            cond["lastTransitionTime"] = existing.get("lastTransitionTime") or cond["lastTransitionTime"]
        if all(existing.get(k) == cond[k] for k in ("status", "reason", "message", "observedGeneration")):
            return
        conditions = [cond if c is existing else c for c in conditions]
    else:
        conditions.append(cond)
    try:
        sched.client.patch(
            rt,
            ns,
            name,
            {"metadata": {"uid": pg["metadata"]["uid"]}, "status": {"conditions": conditions}},
            "merge",
            "status",
        )
    except errors.APIError as e:
        log.warning("PodGroup %s/%s status update failed: %s", ns, name, e)
