"""The CronJob controller alone on the in-process API, on a clock the test moves; the test
plays the Job controller (finishing Jobs by writing their status)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from _lifecycle import eventually, settle

from mockkube.client.client import Client, clone
from mockkube.controllers import cronjob
from mockkube.machinery import meta
from mockkube.testing.cluster import running_server

T0 = datetime(2030, 1, 1, 12, 1, tzinfo=timezone.utc).timestamp()


class Env:
    def __init__(self, server, clock: list[float], ctl) -> None:
        self.server, self.clock, self.ctl = server, clock, ctl
        self.c = Client(server.resources, manager="test")
        self.cj_rt, self.job_rt = self.c.rt("cronjobs", "batch"), self.c.rt("jobs", "batch")

    def create(self, name: str, **spec) -> dict:
        body = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}
                        }
                    }
                },
                **spec,
            },
        }
        return self.c.create(self.cj_rt, body)

    def cj(self, name: str) -> dict:
        return self.c.get(self.cj_rt, "default", name)

    def jobs(self) -> list[dict]:
        return sorted(self.c.list(self.job_rt, "default"), key=lambda j: j["metadata"]["name"])

    def finish(self, job: dict, how: str = "Complete") -> None:
        j = clone(self.c.get(self.job_rt, "default", job["metadata"]["name"]))
        t = meta.rfc3339(self.clock[0])
        j["status"] = {
            "startTime": j["metadata"]["creationTimestamp"],
            "conditions": [{"type": how, "status": "True", "lastTransitionTime": t}],
        }
        if how == "Complete":
            j["status"]["completionTime"] = t
        self.c.update_status(self.job_rt, j)

    def events(self, reason: str) -> list[str]:
        return [e["message"] for e in self.c.list(self.c.rt("events"), "default") if e.get("reason") == reason]

    async def at(self, hh: int, mm: int, ss: int = 0) -> None:
        self.clock[0] = datetime(2030, 1, 1, hh, mm, ss, tzinfo=timezone.utc).timestamp()
        self.ctl.resync()
        await settle()


@pytest.fixture
async def env():
    clock = [T0]
    async with running_server(components=False, clock=lambda: clock[0]) as server:
        [ctl] = await cronjob.start(server)
        try:
            yield Env(server, clock, ctl)
        finally:
            await ctl.stop()


async def test_active_list_and_last_successful_time_follow_the_jobs(env):
    env.create("tick")
    await env.at(12, 5)
    [job] = await eventually(lambda: env.jobs())
    st = env.cj("tick")["status"]
    assert st["lastScheduleTime"] == "2030-01-01T12:05:00Z"
    assert st["active"] == [
        {
            "kind": "Job",
            "namespace": "default",
            "name": job["metadata"]["name"],
            "uid": job["metadata"]["uid"],
            "apiVersion": "batch/v1",
            "resourceVersion": job["metadata"]["resourceVersion"],
        }
    ]
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert env.events("SuccessfulCreate") == [f"Created job {job['metadata']['name']}"]
    await env.at(12, 6)
    env.finish(job)
    st = await eventually(lambda: "active" not in env.cj("tick")["status"] and env.cj("tick")["status"])
    assert st["lastSuccessfulTime"] == "2030-01-01T12:06:00Z"
    assert env.events("SawCompletedJob") == [f"Saw completed job: {job['metadata']['name']}, condition: Complete"]


async def test_replace_deletes_the_running_job(env):
    env.create("swap", concurrencyPolicy="Replace")
    await env.at(12, 5)
    [first] = await eventually(lambda: env.jobs())
    await env.at(12, 10)
    second = await eventually(lambda: [j for j in env.jobs() if j["metadata"]["name"] != first["metadata"]["name"]])
    assert env.c.get(env.job_rt, "default", first["metadata"]["name"]) is None or env.c.get(
        env.job_rt, "default", first["metadata"]["name"]
    )["metadata"].get("deletionTimestamp")
    await eventually(
        lambda: [r["name"] for r in env.cj("swap")["status"].get("active") or ()] == [second[0]["metadata"]["name"]]
    )
    assert f"Deleted job {first['metadata']['name']}" in env.events("SuccessfulDelete")


async def test_a_start_too_late_for_the_deadline_is_missed(env):
    env.create("late", startingDeadlineSeconds=30, suspend=True)
    await env.at(12, 5)
    cj = clone(env.cj("late"))
    cj["spec"]["suspend"] = False
    env.c.update(env.cj_rt, cj)
    await env.at(12, 5, 40)  # 40 s after 12:05 with a 30 s deadline
    await settle()
    assert env.jobs() == [] and "lastScheduleTime" not in (env.cj("late").get("status") or {})
    await env.at(12, 10, 10)
    await eventually(lambda: len(env.jobs()) == 1)


async def test_time_zone_sets_the_schedule_and_the_annotation(env):
    env.create("paris", schedule="0 14 * * *", timeZone="Europe/Paris")
    await env.at(13, 0)  # 14:00 in Paris
    [job] = await eventually(lambda: env.jobs())
    assert job["metadata"]["annotations"][cronjob.SCHEDULED_TIMESTAMP] == "2030-01-01T14:00:00+01:00"
    assert env.cj("paris")["status"]["lastScheduleTime"] == "2030-01-01T13:00:00Z"


async def test_history_limits_keep_the_newest_finished_jobs(env):
    env.create("hist", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0)
    for mm in (5, 10, 15):
        await env.at(12, mm)
        j = await eventually(lambda: [j for j in env.jobs() if not j.get("status")])
        env.finish(j[0], "Failed" if mm == 15 else "Complete")
    await env.at(12, 16)
    names = await eventually(
        lambda: (
            len([j for j in env.jobs() if not j["metadata"].get("deletionTimestamp")]) == 1
            and [j["metadata"]["name"] for j in env.jobs()]
        )
    )
    assert names == [f"hist-{int(datetime(2030, 1, 1, 12, 10, tzinfo=timezone.utc).timestamp() // 60)}"]


async def test_jobs_it_did_not_start_are_reported_and_missing_ones_dropped(env):
    cj = env.create("odd", suspend=True)
    env.c.create(
        env.job_rt,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "manual",
                "namespace": "default",
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "odd",
                        "uid": cj["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": cj["spec"]["jobTemplate"]["spec"],
        },
    )
    await eventually(lambda: env.events("UnexpectedJob"))
    assert env.events("UnexpectedJob")[0] == "Saw a job that the controller did not create or forgot: manual"
    assert "active" not in (env.cj("odd").get("status") or {})
