"""The Job controller (upstream pkg/controller/job) and the TTL-after-finished controller's
job part: pods up to ``parallelism`` until ``completions`` succeed (NonIndexed or Indexed),
failures counted against ``backoffLimit`` with exponential back-off on the cluster clock,
``podFailurePolicy``, ``activeDeadlineSeconds``, ``suspend``, pod tracking with the
``batch.kubernetes.io/job-tracking`` finalizer, the SuccessCriteriaMet/Complete and
FailureTarget/Failed conditions, and ``ttlSecondsAfterFinished``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.controllers import controllerref as cref
from mockkube.controllers import job_util as ju
from mockkube.controllers import recorder
from mockkube.controllers.replicaset import is_pod_ready
from mockkube.machinery import errors, meta
from mockkube.storage.client import Client, clone
from mockkube.storage.informer import Controller, Informer

if TYPE_CHECKING:
    from mockkube.server import Server

log = logging.getLogger("mockkube.job")

NAME = "job-controller"
BACKOFF_BASE, BACKOFF_MAX = 10.0, 360.0  # DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff
BURST = 500


def _terminal(pod: dict) -> str | None:
    phase = (pod.get("status") or {}).get("phase")
    return phase if phase in ("Succeeded", "Failed") else None


def _finished_at(pod: dict) -> float | None:
    ends = [meta.parse_time(t) for st in (pod.get("status") or {}).get("containerStatuses") or ()
            for t in [((st.get("state") or {}).get("terminated") or {}).get("finishedAt")] if t]
    return max(ends) if ends else None


class JobController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = Client(server.resources, NAME)
        self.job_rt = self.client.rt("jobs", "batch")
        self.pod_rt = self.client.rt("pods")
        self.job_inf = Informer(server.store, self.job_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.job_inf.add_handler(lambda typ, obj, prev: self.queue.add((meta.namespace_of(obj), meta.name_of(obj))))
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.job_inf, self.pod_inf]

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        ref = cref.controller_of(obj)
        if ref is not None and ref.get("kind") == "Job":
            self.queue.add((meta.namespace_of(obj), ref["name"]))

    def resync(self) -> None:
        """The clock moved: deadlines, back-offs and TTLs may have come due."""
        for job in self.job_inf.list():
            self.queue.add((meta.namespace_of(job), meta.name_of(job)))

    # reconcile --------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        job = self.client.get(self.job_rt, ns, name)
        if job is None:
            return
        now = self.server.clock()
        uid = job["metadata"]["uid"]
        pods = [p for p in self.client.list(self.pod_rt, ns) if (cref.controller_of(p) or {}).get("uid") == uid]
        status = clone(job.get("status") or {})
        done = ju.finished(job)
        counted = self._count(job, pods, status)
        if done is not None:
            self._write(job, status)
            self._ttl(job, key, now)
            return
        if cref.is_terminating(job):
            self._write(job, status)
            return
        active = [p for p in pods if not _terminal(p) and not p["metadata"].get("deletionTimestamp")]
        terminating = [p for p in pods if not _terminal(p) and p["metadata"].get("deletionTimestamp")]
        suspended = bool(ju.spec(job).get("suspend"))
        self._suspend_condition(job, status, suspended, now)
        if not suspended and not status.get("startTime"):
            status["startTime"] = meta.rfc3339(now)
        failure = self._failure(job, status, counted, now)
        if failure is not None:
            reason, message = failure
            self._set(status, ju.condition("FailureTarget", reason, message, now))
            for p in active:
                self._delete(p)
            if not active and not terminating:
                self._set(status, ju.condition("Failed", reason, message, now))
                recorder.record(self.client, job, "batch/v1", "Job", "Warning", reason, message, NAME, now)
            active = []
        elif self._succeeded(job, status, active):
            msg = "Reached expected number of succeeded pods"
            self._set(status, ju.condition("SuccessCriteriaMet", ju.COMPLETIONS_REACHED, msg, now))
            for p in active:
                self._delete(p)
            if not active and not terminating:
                self._set(status, ju.condition("Complete", ju.COMPLETIONS_REACHED, msg, now))
                status["completionTime"] = meta.rfc3339(now)
                recorder.record(self.client, job, "batch/v1", "Job", "Normal", "Completed", "Job completed",
                                NAME, now)
            active = []
        elif suspended:
            for p in active:
                self._delete(p)
            active = []
        else:
            active += self._create(job, status, active, pods, now, key)
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_pod_ready(p))
        status["terminating"] = len(terminating)
        if not status["active"]:
            del status["active"]
        self._write(job, status)
        deadline = ju.spec(job).get("activeDeadlineSeconds")
        if deadline is not None and status.get("startTime") and not ju.finished({"status": status}):
            left = meta.parse_time(status["startTime"]) + int(deadline) - now
            self.queue.add_after(key, max(0.0, left) + 0.01)

    def _count(self, job: dict, pods: list[dict], status: dict) -> list[tuple[dict, str | None, str]]:
        """Move finished pods into the status and drop their tracking finalizer; returns
        the failed ones with their pod-failure-policy action."""
        indexes = ju.parse_indexes(status.get("completedIndexes"))
        failed_actions: list[tuple[dict, str | None, str]] = []
        for p in pods:
            tracked = ju.TRACKING_FINALIZER in (p["metadata"].get("finalizers") or ())
            if not tracked:
                continue
            phase = _terminal(p)
            if phase is None:
                if not p["metadata"].get("deletionTimestamp"):
                    continue
                phase = "Failed"  # deleted by someone else before it finished: a failure, as upstream
            if phase == "Succeeded":
                idx = ju.pod_index(p)
                if ju.is_indexed(job):
                    if idx is not None and idx not in indexes and idx < (ju.completions(job) or 0):
                        indexes.add(idx)
                        status["succeeded"] = status.get("succeeded", 0) + 1
                else:
                    status["succeeded"] = status.get("succeeded", 0) + 1
            else:
                action, message = ju.failure_policy_action(job, p)
                if action != "Ignore":
                    status["failed"] = status.get("failed", 0) + 1
                failed_actions.append((p, action, message))
            self._untrack(p)
        if ju.is_indexed(job):
            status["completedIndexes"] = ju.format_indexes(indexes)
        status.setdefault("uncountedTerminatedPods", {})
        return failed_actions

    def _failure(self, job: dict, status: dict, counted: list, now: float) -> tuple[str, str] | None:
        for c in status.get("conditions") or ():
            if c.get("type") == "FailureTarget" and c.get("status") == "True":
                return c.get("reason", ""), c.get("message", "")
        for _, action, message in counted:
            if action == "FailJob":
                return ju.POD_FAILURE_POLICY, message
        limit = ju.spec(job).get("backoffLimit")
        if limit is not None and status.get("failed", 0) > int(limit):
            return ju.BACKOFF_LIMIT_EXCEEDED, "Job has reached the specified backoff limit"
        deadline = ju.spec(job).get("activeDeadlineSeconds")
        if deadline is not None and status.get("startTime") and \
                now - meta.parse_time(status["startTime"]) >= int(deadline):
            return ju.DEADLINE_EXCEEDED, "Job was active longer than specified deadline"
        return None

    def _succeeded(self, job: dict, status: dict, active: list[dict]) -> bool:
        want = ju.completions(job)
        if ju.is_indexed(job):
            return want is not None and len(ju.parse_indexes(status.get("completedIndexes"))) >= want
        if want is None:
            return status.get("succeeded", 0) > 0 and not active
        return status.get("succeeded", 0) >= want

    def _create(self, job: dict, status: dict, active: list[dict], pods: list[dict], now: float,
                key: tuple[str, str]) -> list[dict]:
        failures = status.get("failed", 0)
        if failures:
            last = max((t for p in pods if _terminal(p) == "Failed" for t in [_finished_at(p)] if t), default=None)
            if last is not None:
                ready_at = last + min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (failures - 1))
                if now < ready_at:
                    self.queue.add_after(key, ready_at - now)
                    return []
        want = ju.completions(job)
        room = ju.parallelism(job) - len(active)
        if ju.is_indexed(job):
            taken = ju.parse_indexes(status.get("completedIndexes")) | {ju.pod_index(p) for p in active}
            todo = [i for i in range(want or 0) if i not in taken][:max(0, room)]
        else:
            left = (want - status.get("succeeded", 0) - len(active)) if want is not None else (
                room if status.get("succeeded", 0) == 0 else 0)
            todo = [None] * max(0, min(room, left))
        made = []
        for index in todo[:BURST]:
            pod = self.client.create(self.pod_rt, ju.job_pod(job, index))
            recorder.record(self.client, job, "batch/v1", "Job", "Normal", "SuccessfulCreate",
                            f"Created pod: {meta.name_of(pod)}", NAME, now)
            made.append(pod)
        return made

    def _suspend_condition(self, job: dict, status: dict, suspended: bool, now: float) -> None:
        cur = next((c for c in status.get("conditions") or () if c.get("type") == "Suspended"), None)
        if suspended and (cur is None or cur.get("status") != "True"):
            self._set(status, ju.condition("Suspended", ju.JOB_SUSPENDED, "Job suspended", now))
            status.pop("startTime", None)
        elif not suspended and cur is not None and cur.get("status") == "True":
            resumed = ju.condition("Suspended", ju.JOB_RESUMED, "Job resumed", now)
            resumed["status"] = "False"
            self._set(status, resumed)

    def _ttl(self, job: dict, key: tuple[str, str], now: float) -> None:
        ttl = ju.spec(job).get("ttlSecondsAfterFinished")
        if ttl is None or cref.is_terminating(job):
            return
        done_at = next((meta.parse_time(c["lastTransitionTime"]) for c in (job.get("status") or {}).get("conditions")
                        or () if c.get("type") in ("Complete", "Failed") and c.get("lastTransitionTime")), now)
        expire = done_at + int(ttl)
        if now >= expire:
            try:
                self.client.delete(self.job_rt, key[0], key[1], {"propagationPolicy": "Background"})
            except errors.APIError as e:
                if e.code != 404:
                    raise
        else:
            self.queue.add_after(key, expire - now)

    # writes -----------------------------------------------------------------------------
    @staticmethod
    def _set(status: dict, cond: dict) -> None:
        conds = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]]
        old = next((c for c in status.get("conditions") or () if c.get("type") == cond["type"]), None)
        if old is not None and old.get("status") == cond["status"] and old.get("reason") == cond["reason"]:
            return
        status["conditions"] = conds + [cond]

    def _untrack(self, pod: dict) -> None:
        new = clone(pod)
        new["metadata"]["finalizers"] = [f for f in new["metadata"].get("finalizers") or ()
                                         if f != ju.TRACKING_FINALIZER]
        try:
            self.client.update(self.pod_rt, new)
        except errors.APIError as e:
            if e.code not in (404, 409):
                raise

    def _delete(self, pod: dict) -> None:
        """Our own deletions (the Job finished, failed or was suspended) are not failures."""
        self._untrack(pod)
        try:
            self.client.delete(self.pod_rt, meta.namespace_of(pod), meta.name_of(pod))
        except errors.APIError as e:
            if e.code != 404:
                raise

    def _write(self, job: dict, status: dict) -> None:
        cur = self.client.get(self.job_rt, meta.namespace_of(job), meta.name_of(job))
        if cur is None or cur["metadata"].get("uid") != job["metadata"]["uid"]:
            return
        if (cur.get("status") or {}) == status:
            return
        new = clone(cur)
        new["status"] = status
        self.client.update_status(self.job_rt, new)


async def start(server: "Server") -> list:
    c = JobController(server)
    await c.start()
    return [c]
