"""The CronJob controller (upstream pkg/controller/cronjob, controllerv2): Jobs created at
the scheduled times of the cluster clock (so tests move the clock instead of waiting),
in the CronJob's time zone, with startingDeadlineSeconds, concurrencyPolicy
Allow/Forbid/Replace, suspend, the history limits, and status.active /
lastScheduleTime / lastSuccessfulTime.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.controllers import controllerref as cref
from mockkube.controllers import job_util as ju
from mockkube.controllers import recorder
from mockkube.machinery import cron, errors, meta
from mockkube.storage.client import Client, clone
from mockkube.storage.informer import Controller, Informer

if TYPE_CHECKING:
    from mockkube.server import Server

log = logging.getLogger("mockkube.cronjob")

NAME = "cronjob-controller"
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def job_name(cj: dict, scheduled: float) -> str:
    """getJobName: the CronJob's name and the scheduled time in minutes."""
    return f"{cj['metadata']['name']}-{int(scheduled // 60)}"


def job_for(cj: dict, scheduled: float) -> dict:
    """getJobFromTemplate2: the template's labels, annotations and spec, the scheduled
    timestamp annotation and a controller reference."""
    tpl = (cj.get("spec") or {}).get("jobTemplate") or {}
    tm = tpl.get("metadata") or {}
    annotations = dict(tm.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = meta.rfc3339(scheduled)
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": job_name(cj, scheduled), "namespace": cj["metadata"].get("namespace", ""),
                         "labels": dict(tm.get("labels") or {}), "annotations": annotations,
                         "ownerReferences": [cref.new_controller_ref(cj, "batch/v1", "CronJob")]},
            "spec": clone(tpl.get("spec") or {})}


def _ref(job: dict) -> dict:
    m = job["metadata"]
    return {"kind": "Job", "namespace": m.get("namespace", ""), "name": m["name"], "uid": m.get("uid", ""),
            "apiVersion": "batch/v1", "resourceVersion": m.get("resourceVersion", "")}


class CronJobController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = Client(server.resources, NAME)
        self.cj_rt = self.client.rt("cronjobs", "batch")
        self.job_rt = self.client.rt("jobs", "batch")
        self.cj_inf = Informer(server.store, self.cj_rt)
        self.job_inf = Informer(server.store, self.job_rt)
        self.cj_inf.add_handler(lambda typ, obj, prev: self.queue.add((meta.namespace_of(obj), meta.name_of(obj))))
        self.job_inf.add_handler(self._on_job)
        self.informers = [self.cj_inf, self.job_inf]

    def _on_job(self, typ: str, obj: dict, prev: dict | None) -> None:
        ref = cref.controller_of(obj)
        if ref is not None and ref.get("kind") == "CronJob":
            self.queue.add((meta.namespace_of(obj), ref["name"]))

    def resync(self) -> None:
        """The clock moved: schedules may have come due."""
        for cj in self.cj_inf.list():
            self.queue.add((meta.namespace_of(cj), meta.name_of(cj)))

    def reconcile(self, key: tuple[str, str]) -> None:
        ns, name = key
        cj = self.client.get(self.cj_rt, ns, name)
        if cj is None or cref.is_terminating(cj):
            return
        now = self.server.clock()
        spec = cj.get("spec") or {}
        uid = cj["metadata"]["uid"]
        jobs = [j for j in self.client.list(self.job_rt, ns) if (cref.controller_of(j) or {}).get("uid") == uid]
        status = clone(cj.get("status") or {})
        active = [j for j in jobs if ju.finished(j) is None]
        done = [j for j in jobs if ju.finished(j) == "Complete"]
        finished_at = [meta.parse_time(j["status"]["completionTime"]) for j in done
                       if (j.get("status") or {}).get("completionTime")]
        if finished_at:
            last = max(finished_at)
            if not status.get("lastSuccessfulTime") or meta.parse_time(status["lastSuccessfulTime"]) < last:
                status["lastSuccessfulTime"] = meta.rfc3339(last)
        self._cleanup(cj, jobs, now)
        created = None
        if not spec.get("suspend"):
            created = self._schedule(cj, spec, status, active, now)
            if created is not None:
                active.append(created)
        refs = [_ref(j) for j in sorted(active, key=lambda j: j["metadata"]["name"])]
        if refs:
            status["active"] = refs
        else:
            status.pop("active", None)
        self._write(cj, status)
        try:
            nxt = cron.next_after(spec.get("schedule", ""), spec.get("timeZone"), now)
            self.queue.add_after(key, max(0.0, nxt - now) + 0.01)
        except (ValueError, KeyError):
            pass

    def _schedule(self, cj: dict, spec: dict, status: dict, active: list[dict], now: float) -> dict | None:
        schedule, tz = spec.get("schedule", ""), spec.get("timeZone")
        created = meta.parse_time(cj["metadata"]["creationTimestamp"])
        earliest = meta.parse_time(status["lastScheduleTime"]) if status.get("lastScheduleTime") else created
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None:
            earliest = max(earliest, now - int(deadline))
        try:
            scheduled, missed = cron.most_recent(schedule, tz, earliest, now)
        except (ValueError, KeyError) as e:
            recorder.record(self.client, cj, "batch/v1", "CronJob", "Warning", "UnparseableSchedule",
                            f"unparseable schedule: {schedule!r} : {e}", NAME, now)
            return None
        if scheduled is None:
            return None
        if missed > 100:
            recorder.record(self.client, cj, "batch/v1", "CronJob", "Warning", "TooManyMissedTimes",
                            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                            "check clock skew", NAME, now)
        if deadline is not None and scheduled + int(deadline) < now:
            recorder.record(self.client, cj, "batch/v1", "CronJob", "Warning", "MissSchedule",
                            f"Missed scheduled time to start a job: {meta.rfc3339(scheduled)}", NAME, now)
            return None
        if any(j["metadata"]["name"] == job_name(cj, scheduled) for j in active) or (
                status.get("lastScheduleTime") and meta.parse_time(status["lastScheduleTime"]) >= scheduled):
            return None
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            recorder.record(self.client, cj, "batch/v1", "CronJob", "Normal", "JobAlreadyActive",
                            "Not starting job because prior execution is running and concurrency policy is Forbid",
                            NAME, now)
            return None  # upstream retries at the next resync; lastScheduleTime stays
        if policy == "Replace":
            for j in active:
                self._delete_job(cj, j, now, "SuccessfulDelete", f"Deleted job {j['metadata']['name']}")
            active.clear()
        try:
            job = self.client.create(self.job_rt, job_for(cj, scheduled))
        except errors.APIError as e:
            if e.code != 409:
                recorder.record(self.client, cj, "batch/v1", "CronJob", "Warning", "FailedCreate",
                                f"Error creating job: {e.message}", NAME, now)
                raise
            job = self.client.get(self.job_rt, meta.namespace_of(cj), job_name(cj, scheduled))
        recorder.record(self.client, cj, "batch/v1", "CronJob", "Normal", "SuccessfulCreate",
                        f"Created job {job['metadata']['name']}", NAME, now)
        status["lastScheduleTime"] = meta.rfc3339(scheduled)
        return job

    def _cleanup(self, cj: dict, jobs: list[dict], now: float) -> None:
        """cleanupFinishedJobs: keep the newest successful/failed jobs up to the limits."""
        spec = cj.get("spec") or {}
        for state, field in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(field)
            if limit is None:
                continue
            finished = sorted((j for j in jobs if ju.finished(j) == state),
                              key=lambda j: (j.get("status") or {}).get("startTime") or "")
            for j in finished[:max(0, len(finished) - int(limit))]:
                self._delete_job(cj, j, now, "SuccessfulDelete", f"Deleted job {j['metadata']['name']}")

    def _delete_job(self, cj: dict, job: dict, now: float, reason: str, message: str) -> None:
        try:
            self.client.delete(self.job_rt, meta.namespace_of(job), meta.name_of(job),
                               {"propagationPolicy": "Background"})
        except errors.APIError as e:
            if e.code != 404:
                raise
            return
        recorder.record(self.client, cj, "batch/v1", "CronJob", "Normal", reason, message, NAME, now)

    def _write(self, cj: dict, status: dict) -> None:
        cur = self.client.get(self.cj_rt, meta.namespace_of(cj), meta.name_of(cj))
        if cur is None or cur["metadata"].get("uid") != cj["metadata"]["uid"] or (cur.get("status") or {}) == status:
            return
        new = clone(cur)
        new["status"] = status
        self.client.update_status(self.cj_rt, new)


async def start(server: "Server") -> list:
    c = CronJobController(server)
    await c.start()
    return [c]
