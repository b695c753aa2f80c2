"""The CronJob controller (upstream pkg/controller/cronjob, controllerv2): Jobs created at
the scheduled times of the cluster clock (so tests move the clock instead of waiting),
in the CronJob's time zone, with startingDeadlineSeconds, concurrencyPolicy
Allow/Forbid/Replace, suspend, the history limits, and status.active /
lastScheduleTime / lastSuccessfulTime.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mockkube.client import recorder
from mockkube.client.client import clone
from mockkube.client.informer import Controller, Informer
from mockkube.controllers import controllerref as cref
from mockkube.controllers import job_util as ju
from mockkube.machinery import cron, errors, meta

if TYPE_CHECKING:
    from mockkube.server.server import Server

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
    spec = cj.get("spec") or {}
    annotations[SCHEDULED_TIMESTAMP] = cron.rfc3339_in(scheduled, "", spec.get("timeZone"))
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(cj, scheduled),
            "namespace": cj["metadata"].get("namespace", ""),
            "labels": dict(tm.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [cref.new_controller_ref(cj, "batch/v1", "CronJob")],
        },
        "spec": clone(tpl.get("spec") or {}),
    }


def _ref(job: dict) -> dict:
    m = job["metadata"]
    return {
        "kind": "Job",
        "namespace": m.get("namespace", ""),
        "name": m["name"],
        "uid": m.get("uid", ""),
        "apiVersion": "batch/v1",
        "resourceVersion": m.get("resourceVersion", ""),
    }


class CronJobController(Controller):
    name = NAME

    def __init__(self, server: "Server") -> None:
        super().__init__()
        self.server = server
        self.client = server.client("kube-controller-manager")
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
        if cj is None:
            return
        now = self.server.clock()
        uid = cj["metadata"]["uid"]
        jobs = [j for j in self.client.list(self.job_rt, ns) if (cref.controller_of(j) or {}).get("uid") == uid]
        status = clone(cj.get("status") or {})
        requeue = self._sync(cj, status, jobs, now)
        self._cleanup(cj, status, jobs, now)
        if not status.get("active"):
            status.pop("active", None)
        self._write(cj, status)
        if requeue is not None:
            self.queue.add_after(key, max(0.0, requeue))

    def _sync(self, cj: dict, status: dict, jobs: list[dict], now: float) -> float | None:
        """syncCronJob: keep status.active in step with the Jobs, then start the Job of the
        most recent unmet schedule time if concurrencyPolicy and the deadline allow.
        Returns the delay until the next look (None: only on a change)."""
        spec = cj.get("spec") or {}
        active = status.setdefault("active", [])
        children = set()
        for j in jobs:
            juid = j["metadata"]["uid"]
            children.add(juid)
            found = any(r.get("uid") == juid for r in active)
            done = ju.finished(j)
            if not found and done is None:
                self._event(
                    cj,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {meta.name_of(j)}",
                    now,
                )
            elif done is not None:
                if found:
                    active[:] = [r for r in active if r.get("uid") != juid]
                    self._event(
                        cj, "Normal", "SawCompletedJob", f"Saw completed job: {meta.name_of(j)}, condition: {done}", now
                    )
                completed = (j.get("status") or {}).get("completionTime")
                if (
                    done == "Complete"
                    and completed
                    and (
                        not status.get("lastSuccessfulTime")
                        or meta.parse_time(completed) > meta.parse_time(status["lastSuccessfulTime"])
                    )
                ):
                    status["lastSuccessfulTime"] = completed
        for r in list(active):
            if (
                r.get("uid") not in children
                and self.client.get(self.job_rt, r.get("namespace", ""), r.get("name", "")) is None
            ):
                self._event(cj, "Normal", "MissingJob", f"Active job went missing: {r.get('name')}", now)
                active.remove(r)
        if cref.is_terminating(cj):
            return None
        tz = spec.get("timeZone")
        if tz is not None and not cron.valid_timezone(tz):
            self._event(cj, "Warning", "UnknownTimeZone", f"invalid timeZone: {tz!r}: unknown time zone {tz}", now)
            return None
        if spec.get("suspend"):
            return None
        schedule = spec.get("schedule", "")
        if "TZ" in schedule:
            self._event(
                cj,
                "Warning",
                "UnsupportedSchedule",
                f"CRON_TZ or TZ used in schedule {schedule!r} is not officially supported, see "
                "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                now,
            )
        problem = cron.parse_error(schedule)
        if problem is not None:
            self._event(cj, "Warning", "UnparseableSchedule", f"unparseable schedule: {schedule!r} : {problem}", now)
            return None
        created = meta.parse_time(cj["metadata"]["creationTimestamp"])
        last = meta.parse_time(status["lastScheduleTime"]) if status.get("lastScheduleTime") else None
        deadline = spec.get("startingDeadlineSeconds")
        nxt = cron.next_schedule_delay(schedule, tz, created, last, now)
        earliest = last if last is not None else created
        if deadline is not None:
            earliest = max(earliest, now - int(deadline))
        scheduled, missed = cron.most_recent(schedule, tz, earliest, now)
        if scheduled is None:
            return nxt
        if missed > 100:
            self._event(
                cj,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
                now,
            )
        if deadline is not None and scheduled + int(deadline) < now:
            self._event(
                cj, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {cron.rfc1123z(scheduled)}", now
            )
            return nxt
        if any(r.get("name") == job_name(cj, scheduled) for r in active) or last == scheduled:
            return nxt
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            self._event(
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
                now,
            )
            return nxt
        if policy == "Replace":
            for r in list(active):
                j = self.client.get(self.job_rt, r.get("namespace", ""), r.get("name", ""))
                if j is not None:
                    self._delete_job(cj, j, status, now)
        try:
            job = self.client.create(self.job_rt, job_for(cj, scheduled))
            self._event(cj, "Normal", "SuccessfulCreate", f"Created job {meta.name_of(job)}", now)
        except errors.APIError as e:
            if e.code != 409:
                self._event(cj, "Warning", "FailedCreate", f"Error creating job: {e.message}", now)
                raise
            job = self.client.get(self.job_rt, meta.namespace_of(cj), job_name(cj, scheduled))
            if (
                job is None
                or (cref.controller_of(job) or {}).get("uid") != cj["metadata"]["uid"]
                or any(r.get("uid") == job["metadata"]["uid"] for r in active)
            ):
                return None
        active.append(_ref(job))
        status["lastScheduleTime"] = meta.rfc3339(scheduled)
        return cron.next_schedule_delay(schedule, tz, created, scheduled, now)

    def _event(self, cj: dict, type_: str, reason: str, message: str, now: float) -> None:
        recorder.record(self.client, cj, "batch/v1", "CronJob", type_, reason, message, NAME, now)

    def _cleanup(self, cj: dict, status: dict, jobs: list[dict], now: float) -> None:
        """cleanupFinishedJobs: keep the newest successful/failed Jobs up to the limits
        (by startTime, Jobs that never started last)."""
        spec = cj.get("spec") or {}
        for state, field in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(field)
            if limit is None:
                continue
            done = sorted(
                (j for j in jobs if ju.finished(j) == state and not cref.is_terminating(j)),
                key=lambda j: (
                    not (j.get("status") or {}).get("startTime"),
                    meta.parse_time(j["status"]["startTime"]) if (j.get("status") or {}).get("startTime") else 0.0,
                    meta.name_of(j),
                ),
            )
            for j in done[: max(0, len(done) - int(limit))]:
                self._delete_job(cj, j, status, now)

    def _delete_job(self, cj: dict, job: dict, status: dict, now: float) -> None:
        """deleteJob: delete it (background) and drop it from status.active."""
        try:
            self.client.delete(
                self.job_rt, meta.namespace_of(job), meta.name_of(job), {"propagationPolicy": "Background"}
            )
        except errors.APIError as e:
            if e.code != 404:
                self._event(cj, "Warning", "FailedDelete", f"Deleted job: {e.message}", now)
                return
        active = status.setdefault("active", [])
        active[:] = [r for r in active if r.get("uid") != job["metadata"]["uid"]]
        self._event(cj, "Normal", "SuccessfulDelete", f"Deleted job {meta.name_of(job)}", now)

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
