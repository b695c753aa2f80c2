"""The Job controller (upstream pkg/controller/job, syncJob): pods up to ``parallelism``
until ``completions`` succeed (NonIndexed or Indexed), failures counted against
``backoffLimit`` (or ``backoffLimitPerIndex`` / ``maxFailedIndexes``) with exponential
back-off on the cluster clock, ``podFailurePolicy``, ``successPolicy``,
``activeDeadlineSeconds``, ``suspend``, ``podReplacementPolicy``.

Pods are tracked as upstream tracks them: each carries the
``batch.kubernetes.io/job-tracking`` finalizer; a finished pod's UID first goes to
``status.uncountedTerminatedPods``, then its finalizer is removed, then it moves into the
``succeeded``/``failed`` counters. A Job that meets its criteria first gets the interim
SuccessCriteriaMet or FailureTarget condition, and Complete or Failed once no pod of it is
still terminating. ``ttlSecondsAfterFinished`` is the TTL-after-finished controller's
(mockkube/controllers/ttlafterfinished.py).

Writes land in the cache before the client call returns, so the upstream "expectations"
bookkeeping is not needed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import job_util as ju
from mockkube.controllers.replicaset import is_active, is_pod_ready, is_terminating, rank_for_deletion
from mockkube.machinery import errors, meta
from mockkube.machinery.selectors import label_selector_from_object

if TYPE_CHECKING:
    from mockkube.server.server import Server

log = logging.getLogger("mockkube.job")

NAME = "job-controller"
MANAGED_BY = "kubernetes.io/job-controller"
BURST = 500  # MaxPodCreateDeletePerSync


def _uid(obj: dict) -> str:
    return obj["metadata"].get("uid", "")


class _Sync:
    """syncJobCtx: what one sync of one Job has worked out so far."""

    def __init__(self, job: dict, pods: list[dict], now: float) -> None:
        self.job = job
        self.now = now
        self.status: dict = clone(job.get("status") or {})
        self.status.setdefault("uncountedTerminatedPods", {})
        self.pods = pods
        self.active_pods = [p for p in pods if is_active(p)]
        self.active = len(self.active_pods)
        self.ready = sum(1 for p in self.active_pods if is_pod_ready(p))
        self.terminating = sum(1 for p in pods if is_terminating(p))
        unc = self.status["uncountedTerminatedPods"]
        self.unc_succeeded: set[str] = set(unc.get("succeeded") or ())
        self.unc_failed: set[str] = set(unc.get("failed") or ())
        self.succeeded = 0
        self.failed = 0
        self.finished: dict | None = None
        self.prev_succeeded_indexes: set[int] = set()
        self.succeeded_indexes: set[int] = set()
        self.failed_indexes: set[int] | None = None
        self.delayed: dict[int, dict] = {}  # podsWithDelayedDeletionPerIndex


class JobController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
        self.job_rt = self.client.rt("jobs", "batch")
        self.pod_rt = self.client.rt("pods")
        self.job_inf = Informer(server.store, self.job_rt)
        self.pod_inf = Informer(server.store, self.pod_rt)
        self.job_inf.add_handler(lambda typ, obj, prev: self.queue.add((meta.namespace_of(obj), meta.name_of(obj))))
        self.pod_inf.add_handler(self._on_pod)
        self.informers = [self.job_inf, self.pod_inf]
        self.backoff: dict[tuple[str, str], tuple[int, float | None]] = {}  # the backoff store

    def _on_pod(self, typ: str, obj: dict, prev: dict | None) -> None:
        ref = cref.controller_of(obj)
        if ref is not None and ref.get("kind") == "Job":
            self.queue.add((meta.namespace_of(obj), ref["name"]))
        elif ref is None and typ != "DELETED":
            for job in self.job_inf.list(meta.namespace_of(obj)):  # a candidate for adoption
                sel = (job.get("spec") or {}).get("selector")
                if sel and label_selector_from_object(sel).matches((obj["metadata"].get("labels") or {})):
                    self.queue.add((meta.namespace_of(job), meta.name_of(job)))

    def resync(self) -> None:
        """The clock moved: deadlines and back-offs may have come due."""
        for job in self.job_inf.list():
            self.queue.add((meta.namespace_of(job), meta.name_of(job)))

    # syncJob --------------------------------------------------------------------------------
    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        job = self.client.get(self.job_rt, ns, name)
        if job is None:
            self.backoff.pop(key, None)
            self._release_orphans(ns, name, None)
            return
        self._release_orphans(ns, name, _uid(job))
        managed_by = ju.spec(job).get("managedBy")
        if managed_by and managed_by != MANAGED_BY:
            return
        if ju.finished(job):
            self.backoff.pop(key, None)
            return
        mode = ju.spec(job).get("completionMode")
        if mode not in (None, "NonIndexed", "Indexed"):
            self._event(job, "Warning", "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
            return
        now = self.server.clock()
        s = _Sync(job, self._pods_for(job), now)
        spec, status = ju.spec(job), s.status
        new_succeeded = self._new_finished(s, s.unc_succeeded, lambda p: ju.phase(p) == "Succeeded")
        new_failed = self._new_finished(s, s.unc_failed, lambda p: ju.is_pod_failed(p, job))
        s.succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + len(s.unc_succeeded)
        s.failed = (
            int(status.get("failed") or 0)
            + len(s.unc_failed)
            + sum(1 for p in new_failed if ju.failure_policy_match(job, p)[1])
        )
        if not status.get("startTime") and not ju.suspended(job):
            status["startTime"] = meta.rfc3339(now)
        record = ju.next_backoff_record(self.backoff.get(key, (0, None)), new_succeeded, new_failed)

        s.finished = clone(ju.find_condition(status, "SuccessCriteriaMet") or {}) or None
        if s.finished is not None and s.finished.get("status") != "True":
            s.finished = None
        if s.finished is None:
            target = ju.find_condition(status, "FailureTarget")
            if target is not None and target.get("status") == "True":
                s.finished = ju.condition("Failed", target.get("reason", ""), target.get("message", ""), now)
            else:
                msg = self._fail_job_message(job, s.pods)
                if msg is not None:
                    s.finished = ju.condition("FailureTarget", ju.POD_FAILURE_POLICY, msg, now)
        if s.finished is None:
            deadline = spec.get("activeDeadlineSeconds")
            if s.failed > int(spec.get("backoffLimit") or 0) or ju.past_backoff_limit_on_failure(job, s.pods):
                s.finished = ju.condition(
                    "FailureTarget", ju.BACKOFF_LIMIT_EXCEEDED, "Job has reached the specified backoff limit", now
                )
            elif self._past_deadline(job, status, now):
                s.finished = ju.condition(
                    "FailureTarget", ju.DEADLINE_EXCEEDED, "Job was active longer than specified deadline", now
                )
            elif deadline is not None and not ju.suspended(job) and status.get("startTime"):
                self.queue.add_after(key, max(0.0, meta.parse_time(status["startTime"]) + int(deadline) - now) + 0.01)

        if ju.is_indexed(job):
            self._indexes(s)

        if s.finished is not None:
            deleted_ready, deleted = self._delete_pods(job, s.active_pods, untrack=False)
            s.active -= deleted
            s.terminating += deleted
            s.ready -= deleted_ready
        else:
            manage_called = False
            if not cref.is_terminating(job):
                self._manage(s, key, record)
                manage_called = True
            want = ju.completions(job)
            complete = s.active == 0 and (s.succeeded > 0 if want is None else s.succeeded >= want)
            if complete:
                s.finished = ju.condition(
                    "SuccessCriteriaMet", ju.COMPLETIONS_REACHED, "Reached expected number of succeeded pods", now
                )
            elif manage_called:
                if ju.suspended(job):
                    if ju.ensure_condition(status, "Suspended", "True", ju.JOB_SUSPENDED, "Job suspended", now):
                        self._event(job, "Normal", "Suspended", "Job suspended")
                elif ju.ensure_condition(status, "Suspended", "False", ju.JOB_RESUMED, "Job resumed", now):
                    self._event(job, "Normal", "Resumed", "Job resumed")
                    status["startTime"] = meta.rfc3339(now)  # activeDeadlineSeconds counts from the resume
        if s.active:
            status["active"] = s.active
        else:
            status.pop("active", None)
        status["ready"] = max(0, s.ready)
        status["terminating"] = s.terminating
        self._track_and_remove_finalizers(s)
        self.backoff[key] = record

    # pods -----------------------------------------------------------------------------------
    def _pods_for(self, job: dict) -> list[dict]:
        """getPodsForJob: our pods, adopting matching orphans (with the tracking finalizer)
        and releasing ours that no longer match."""
        sel = (job.get("spec") or {}).get("selector")
        selector = label_selector_from_object(sel) if sel else None
        ref = cref.new_controller_ref(job, "batch/v1", "Job")
        out = []
        for p in self.client.list(self.pod_rt, meta.namespace_of(job)):
            owner = cref.controller_of(p)
            if owner is not None and owner.get("uid") == _uid(job) and selector is None:
                out.append(p)
                continue
            if selector is None:
                continue
            decision = cref.claim_decision(job, p, selector)
            if decision == "keep":
                out.append(p)
            elif decision == "adopt":
                new = cref.with_owner(clone(p), ref)
                if ju.TRACKING_FINALIZER not in (new["metadata"].get("finalizers") or ()):
                    new["metadata"]["finalizers"] = list(new["metadata"].get("finalizers") or ()) + [
                        ju.TRACKING_FINALIZER
                    ]
                try:
                    out.append(
                        self.client.patch(
                            self.pod_rt, meta.namespace_of(new), meta.name_of(new), cref.metadata_patch(new)
                        )
                    )
                except errors.APIError as e:
                    if e.code not in (404, 409, 422):
                        raise
            elif decision == "release":
                new = cref.without_owner(clone(p), _uid(job))
                new["metadata"]["finalizers"] = [
                    f for f in new["metadata"].get("finalizers") or () if f != ju.TRACKING_FINALIZER
                ]
                try:
                    self.client.patch(self.pod_rt, meta.namespace_of(new), meta.name_of(new), cref.metadata_patch(new))
                except errors.APIError as e:
                    if e.code not in (404, 409, 422):
                        raise
        return out

    def _release_orphans(self, ns: str, name: str, uid: str | None) -> None:
        """syncOrphanPod: a pod whose Job is gone (or was replaced) loses the tracking
        finalizer so that the garbage collector can delete it."""
        for p in self.client.list(self.pod_rt, ns):
            ref = cref.controller_of(p)
            if ref is None or ref.get("kind") != "Job" or ref.get("name") != name or ref.get("uid") == uid:
                continue
            if ju.tracked(p):
                self._untrack(p)

    def _new_finished(self, s: _Sync, uncounted: set[str], pred) -> list[dict]:
        """getValidPodsWithFilter: tracked pods not yet in the uncounted lists (and with a
        valid index for Indexed Jobs) that ``pred`` accepts."""
        out = []
        for p in s.pods:
            if not ju.tracked(p) or _uid(p) in uncounted:
                continue
            if ju.is_indexed(s.job) and not ju.valid_index(s.job, p):
                continue
            if pred(p):
                out.append(p)
        return out

    @staticmethod
    def _fail_job_message(job: dict, pods: list[dict]) -> str | None:
        if not ju.spec(job).get("podFailurePolicy"):
            return None
        for p in pods:
            if ju.is_pod_failed(p, job):
                msg = ju.failure_policy_match(job, p)[0]
                if msg is not None:
                    return msg
        return None

    @staticmethod
    def _past_deadline(job: dict, status: dict, now: float) -> bool:
        deadline = ju.spec(job).get("activeDeadlineSeconds")
        if deadline is None or not status.get("startTime") or ju.suspended(job):
            return False
        return now - meta.parse_time(status["startTime"]) >= int(deadline)

    def _indexes(self, s: _Sync) -> None:
        """Succeeded and (with backoffLimitPerIndex) failed indexes, the per-index
        failure conditions and the success policy."""
        job, status, n = s.job, s.status, ju.completions(s.job) or 0
        s.prev_succeeded_indexes = ju.parse_indexes(status.get("completedIndexes"), n)
        s.succeeded_indexes = s.prev_succeeded_indexes | {
            ju.pod_index(p) for p in s.pods if ju.phase(p) == "Succeeded" and ju.valid_index(job, p) and ju.tracked(p)
        }
        s.succeeded = len(s.succeeded_indexes)
        if ju.has_backoff_limit_per_index(job):
            failed = ju.parse_indexes(status.get("failedIndexes"), n)
            failed |= {
                ju.pod_index(p)
                for p in s.pods
                if ju.valid_index(job, p) and ju.tracked(p) and ju.is_index_failed(job, p)
            }
            s.failed_indexes = failed
            if s.finished is None:
                most = ju.spec(job).get("maxFailedIndexes")
                if most is not None and len(failed) > int(most):
                    s.finished = ju.condition(
                        "FailureTarget",
                        ju.MAX_FAILED_INDEXES_EXCEEDED,
                        "Job has exceeded the specified maximal number of failed indexes",
                        s.now,
                    )
                elif failed and len(failed) + len(s.succeeded_indexes) >= n:
                    s.finished = ju.condition("FailureTarget", ju.FAILED_INDEXES, "Job has failed indexes", s.now)
            s.delayed = self._delayed_deletion(s)
        if s.finished is None:
            msg = ju.match_success_policy(job, s.succeeded_indexes)
            if msg is not None:
                s.finished = ju.condition("SuccessCriteriaMet", ju.SUCCESS_POLICY, msg, s.now)

    @staticmethod
    def _delayed_deletion(s: _Sync) -> dict[int, dict]:
        """getPodsWithDelayedDeletionPerIndex: per index awaiting a replacement, the last
        failed pod, kept (finalizer and all) until the replacement carries its counts."""
        active = {ju.pod_index(p) for p in s.active_pods}
        out: dict[int, dict] = {}
        for p in s.pods:
            if not ju.tracked(p) or _uid(p) in s.unc_failed or _uid(p) in s.unc_succeeded:
                continue
            if not ju.valid_index(s.job, p) or not ju.is_pod_failed(p, s.job):
                continue
            ix = ju.pod_index(p)
            if ix in s.succeeded_indexes or ix in (s.failed_indexes or ()) or ix in active:
                continue
            last = out.get(ix)
            if last is None or (
                ju.index_absolute_failure_count(last) <= ju.index_absolute_failure_count(p)
                and ju.finished_time(p) >= ju.finished_time(last)
            ):
                out[ix] = p
        return out

    # manageJob ------------------------------------------------------------------------------
    def _manage(self, s: _Sync, key: tuple[str, str], record: tuple[int, float | None]) -> None:
        job = s.job
        if ju.suspended(job):
            removed_ready, removed = self._delete_pods(
                job, self._for_removal(job, s.active_pods, s.active, s.now), untrack=True
            )
            s.active -= removed
            s.terminating += removed
            s.ready -= removed_ready
            return
        want_n = ju.completions(job)
        par = ju.parallelism(job)
        if want_n is None:
            want = s.active if s.succeeded > 0 else par
        else:
            want = max(0, min(par, want_n - s.succeeded))
        to_delete = self._for_removal(job, s.active_pods, max(0, s.active - want), s.now)[:BURST]
        if to_delete:
            removed_ready, removed = self._delete_pods(job, to_delete, untrack=True)
            s.active -= removed
            s.terminating += removed
            s.ready -= removed_ready
            return
        terminating = s.terminating if ju.only_replace_failed(job) else 0
        diff = want - terminating - s.active
        if diff <= 0:
            return
        if not ju.has_backoff_limit_per_index(job):
            remaining = ju.remaining_backoff(record[0], record[1], s.now)
            if remaining > 0:
                self.queue.add_after(key, remaining + 0.01)
                return
        diff = min(diff, BURST)
        indexes: list[int | None] = [None] * diff
        if ju.is_indexed(job):
            taken = set(s.succeeded_indexes) | {ju.pod_index(p) for p in s.active_pods}
            if ju.only_replace_failed(job):
                taken |= {ju.pod_index(p) for p in s.pods if is_terminating(p)}
            taken |= s.failed_indexes or set()
            pending = ju.first_pending_indexes(job, diff, {i for i in taken if i is not None})
            if ju.has_backoff_limit_per_index(job):
                now_ok, wait = [], None
                for ix in pending:
                    last = s.delayed.get(ix)
                    left = (
                        0.0
                        if last is None
                        else ju.remaining_backoff(
                            ju.index_absolute_failure_count(last) + 1, ju.finished_time(last), s.now
                        )
                    )
                    if left == 0:
                        now_ok.append(ix)
                    elif wait is None or left < wait:
                        wait = left
                if not now_ok and wait is not None:
                    self.queue.add_after(key, wait + 0.01)
                    return
                pending = now_ok
            indexes = list(pending)
        for ix in indexes:
            replaced = s.delayed.get(ix) if ix is not None else None
            try:
                pod = self.client.create(self.pod_rt, ju.job_pod(job, ix, replaced))
            except errors.APIError as e:
                self._event(job, "Warning", "FailedCreate", f"Error creating: {e.message}")
                if e.code in (403, 409, 422):  # quota, terminating namespace, bad template: try again later
                    self.queue.add_rate_limited(key, base=1.0, cap=60.0)
                    break
                raise
            self._event(job, "Normal", "SuccessfulCreate", f"Created pod: {meta.name_of(pod)}")
            s.active += 1

    @staticmethod
    def _for_removal(job: dict, active_pods: list[dict], at_least: int, now: float) -> list[dict]:
        """activePodsForRemoval: for Indexed Jobs, pods without a valid index and all but
        one pod of a repeated index first; then the least valuable pods."""
        rm: list[dict] = []
        left = list(active_pods)
        if ju.is_indexed(job):
            left = []
            by_index: dict[int, list[dict]] = {}
            for p in active_pods:
                if ju.valid_index(job, p):
                    by_index.setdefault(ju.pod_index(p), []).append(p)
                else:
                    rm.append(p)
            for ix in sorted(by_index):
                group = rank_for_deletion(by_index[ix], {}, now)
                rm.extend(group[:-1])
                left.append(group[-1])
        if len(rm) < at_least:
            rm.extend(rank_for_deletion(left, {}, now)[: at_least - len(rm)])
        return rm

    # trackJobStatusAndRemoveFinalizers ------------------------------------------------------
    def _track_and_remove_finalizers(self, s: _Sync) -> None:
        job, status = s.job, s.status
        unc = status["uncountedTerminatedPods"]
        indexed = ju.is_indexed(job)
        pods = (
            sorted(s.pods, key=lambda p: ju.pod_index(p) if ju.pod_index(p) is not None else -1) if indexed else s.pods
        )
        with_finalizer = {_uid(p) for p in pods if ju.tracked(p)}
        self._clean_uncounted(status, with_finalizer)
        to_untrack: list[dict] = []
        new_indexes: list[int] = []
        reached_max = False
        for p in pods:
            if not ju.tracked(p):
                continue
            failed = ju.is_pod_failed(p, job)
            if not self._can_untrack(s, p, failed):
                continue
            to_untrack.append(p)
            uid = _uid(p)
            if ju.phase(p) == "Succeeded" and uid not in s.unc_failed:
                if indexed:
                    ix = ju.pod_index(p)
                    if ju.valid_index(job, p) and ix not in s.prev_succeeded_indexes:
                        new_indexes.append(ix)
                elif uid not in s.unc_succeeded:
                    unc.setdefault("succeeded", []).append(uid)
                    s.unc_succeeded.add(uid)
            elif failed or (s.finished is not None and s.finished["type"] != "SuccessCriteriaMet"):
                if uid not in s.unc_failed and (not indexed or ju.valid_index(job, p)):
                    if ju.failure_policy_match(job, p)[1]:
                        unc.setdefault("failed", []).append(uid)
                        s.unc_failed.add(uid)
            if (
                len(new_indexes) + len(unc.get("succeeded") or ()) + len(unc.get("failed") or ())
                >= ju.MAX_UNCOUNTED_PODS
            ):
                reached_max = True
                break
        if indexed:
            s.succeeded_indexes |= set(new_indexes)
            status["succeeded"] = len(s.succeeded_indexes)
            status["completedIndexes"] = ju.format_indexes(s.succeeded_indexes)
            if s.failed_indexes is not None:
                status["failedIndexes"] = ju.format_indexes(s.failed_indexes)
            else:
                status.pop("failedIndexes", None)
        if s.finished is not None and s.finished["type"] == "FailureTarget":
            status.setdefault("conditions", []).append(s.finished)
            s.finished = ju.condition("Failed", s.finished["reason"], s.finished["message"], s.now)
        if s.finished is not None and s.finished["type"] == "SuccessCriteriaMet":
            cur = ju.find_condition(status, "SuccessCriteriaMet")
            if cur is None or cur.get("status") != "True":
                status.setdefault("conditions", []).append(s.finished)
            s.finished = ju.condition("Complete", s.finished["reason"], s.finished["message"], s.now)
        self._write(job, status)  # 1: the uncounted UIDs and the interim condition
        for p in to_untrack:
            if self._untrack(p):
                with_finalizer.discard(_uid(p))
        self._clean_uncounted(status, with_finalizer)
        done = not reached_max and self._enact_finished(s)
        self._write(job, status)  # 2: the counters, and Complete/Failed
        if done:
            c = s.finished
            if c["type"] == "Complete":
                want = ju.completions(job)
                if want is not None and int(status.get("succeeded") or 0) > want:
                    self._event(
                        job,
                        "Warning",
                        "TooManySucceededPods",
                        "Too many succeeded pods running after completion count reached",
                    )
                self._event(job, "Normal", "Completed", "Job completed")
            else:
                self._event(job, "Warning", c["reason"], c["message"])

    @staticmethod
    def _can_untrack(s: _Sync, pod: dict, failed: bool) -> bool:
        """canRemoveFinalizer."""
        if cref.is_terminating(s.job) or s.finished is not None or ju.phase(pod) == "Succeeded":
            return True
        if not failed:
            return False
        if ju.has_backoff_limit_per_index(s.job):
            last = s.delayed.get(ju.pod_index(pod)) if ju.pod_index(pod) is not None else None
            if last is not None and _uid(last) == _uid(pod):
                return False
        return True

    @staticmethod
    def _clean_uncounted(status: dict, with_finalizer: set[str]) -> None:
        """cleanUncountedPodsWithoutFinalizers: uncounted pods that lost their finalizer
        move into the counters."""
        unc = status["uncountedTerminatedPods"]
        for field, counter in (("succeeded", "succeeded"), ("failed", "failed")):
            uids = unc.get(field) or []
            keep = [u for u in uids if u in with_finalizer]
            if len(keep) != len(uids):
                total = int(status.get(counter) or 0) + len(uids) - len(keep)
                status[counter] = total
            if keep:
                unc[field] = keep
            else:
                unc.pop(field, None)
        for counter in ("succeeded", "failed"):
            if not status.get(counter):
                status.pop(counter, None)

    def _enact_finished(self, s: _Sync) -> bool:
        """enactJobFinished: Complete or Failed once nothing is uncounted or terminating."""
        c = s.finished
        if c is None:
            return False
        unc = s.status["uncountedTerminatedPods"]
        if unc.get("succeeded") or unc.get("failed") or s.terminating > 0:
            return False
        ju.ensure_condition(s.status, c["type"], "True", c["reason"], c["message"], s.now)
        if c["type"] == "Complete":
            s.status["completionTime"] = ju.find_condition(s.status, "Complete")["lastTransitionTime"]
        return True

    # writes ---------------------------------------------------------------------------------
    def _event(self, job: dict, type_: str, reason: str, message: str) -> None:
        recorder.record(self.client, job, "batch/v1", "Job", type_, reason, message, NAME, self.server.clock())

    def _untrack(self, pod: dict) -> bool:
        """Remove the tracking finalizer; True when it is gone (or the pod is)."""
        new = clone(pod)
        new["metadata"]["finalizers"] = [
            f for f in new["metadata"].get("finalizers") or () if f != ju.TRACKING_FINALIZER
        ]
        try:
            self.client.patch(self.pod_rt, meta.namespace_of(new), meta.name_of(new), cref.metadata_patch(new))
        except errors.APIError as e:
            if e.code == 404:
                return True
            if e.code == 409:
                cur = self.client.get(self.pod_rt, meta.namespace_of(pod), meta.name_of(pod))
                if cur is None or _uid(cur) != _uid(pod):
                    return True
                return self._untrack(cur) if ju.tracked(cur) else True
            raise
        return True

    def _delete_pods(self, job: dict, pods: list[dict], untrack: bool) -> tuple[int, int]:
        """deleteActivePods (finalizers kept: the pods are counted once they stop) or
        deleteJobPods (``untrack``: finalizers dropped first, so they never count)."""
        ready = deleted = 0
        for p in pods:
            if untrack and ju.tracked(p):
                self._untrack(p)
            try:
                self.client.delete(self.pod_rt, meta.namespace_of(p), meta.name_of(p))
            except errors.APIError as e:
                if e.code != 404:
                    raise
            deleted += 1
            ready += 1 if is_pod_ready(p) else 0
            self._event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {meta.name_of(p)}")
        return ready, deleted

    def _write(self, job: dict, status: dict) -> None:
        cur = self.client.get(self.job_rt, meta.namespace_of(job), meta.name_of(job))
        if cur is None or _uid(cur) != _uid(job):
            return
        if (cur.get("status") or {}) == status:
            return
        new = clone(cur)
        new["status"] = clone(status)
        self.client.update_status(self.job_rt, new)


async def start(server: "Server") -> list:
    c = JobController(server)
    await c.start()
    return [c]
