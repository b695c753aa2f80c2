"""The Job and TTL-after-finished controllers against a server without kubelets: Jobs are
created and read over HTTP, the test plays the kubelet (pod phases, finished deletions)
and moves the clock. Checks upstream's status protocol: uncountedTerminatedPods before
the counters, the interim SuccessCriteriaMet/FailureTarget conditions, Complete/Failed
only once no pod terminates, and the per-index and success policies."""

from __future__ import annotations

import aiohttp
import pytest
from _lifecycle import eventually, settle

from mockkube.client.client import Client, clone
from mockkube.client.informer import Informer
from mockkube.controllers import job as jobctl
from mockkube.controllers import job_util as ju
from mockkube.controllers import ttlafterfinished
from mockkube.machinery import meta
from mockkube.testing.cluster import running_server

NOW = 1_900_000_000.0
JOBS = "/apis/batch/v1/namespaces/default/jobs"


class Env:
    def __init__(self, server, http: aiohttp.ClientSession, clock: list[float], controllers: list) -> None:
        self.server, self.http, self.clock, self.controllers = server, http, clock, controllers
        self.c = Client(server.resources, manager="test")
        self.pod_rt = self.c.rt("pods")
        self.job_rt = self.c.rt("jobs", "batch")
        self.history: list[dict] = []  # every status a Job went through, in order

    async def create(self, name: str, **spec) -> dict:
        tpl_meta = spec.pop("template_metadata", {})
        body = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": {
                "template": {
                    "metadata": tpl_meta,
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
                },
                **spec,
            },
        }
        async with self.http.post(self.server.url + JOBS, json=body) as r:
            assert r.status == 201, await r.text()
            return await r.json()

    async def job(self, name: str) -> dict:
        async with self.http.get(f"{self.server.url}{JOBS}/{name}") as r:
            assert r.status == 200
            return await r.json()

    def pods(self, live_only: bool = True) -> list[dict]:
        """The Job's pods; the test's kubelet binds and runs every new one (so that a
        deletion is graceful, as on a node)."""
        out = []
        for p in self.c.list(self.pod_rt, "default"):
            if not (p.get("spec") or {}).get("nodeName") and not p["metadata"].get("deletionTimestamp"):
                self.c.bind("default", p["metadata"]["name"], "node-1")
                p = clone(self.c.get(self.pod_rt, "default", p["metadata"]["name"]))
                p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
                p = self.c.update_status(self.pod_rt, p)
            if not (live_only and p["metadata"].get("deletionTimestamp")):
                out.append(p)
        return out

    def finish(self, pod: dict, code: int = 0) -> None:
        """The kubelet: the pod's container exits with ``code``."""
        p = clone(self.c.get(self.pod_rt, "default", pod["metadata"]["name"]))
        t = meta.rfc3339(self.clock[0])
        p["status"] = {
            "phase": "Succeeded" if code == 0 else "Failed",
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": t}],
            "containerStatuses": [
                {
                    "name": "main",
                    "ready": False,
                    "restartCount": 0,
                    "image": "busybox",
                    "imageID": "",
                    "state": {
                        "terminated": {
                            "exitCode": code,
                            "reason": "Completed" if code == 0 else "Error",
                            "startedAt": t,
                            "finishedAt": t,
                        }
                    },
                }
            ],
        }
        self.c.update_status(self.pod_rt, p)

    def stop_deleted(self) -> None:
        """The kubelet: every pod being deleted stops (Failed) and its deletion completes."""
        for p in self.pods(live_only=False):
            if p["metadata"].get("deletionTimestamp"):
                if ju.phase(p) not in ("Succeeded", "Failed"):
                    self.finish(p, 137)
                self.c.finalize_delete(self.pod_rt, "default", p["metadata"]["name"])

    async def advance(self, seconds: float) -> None:
        self.clock[0] += seconds
        for c in self.controllers:
            c.resync()
        await settle()


@pytest.fixture
async def env():
    clock = [NOW]
    async with running_server(components=False, clock=lambda: clock[0]) as server:
        started = await jobctl.start(server) + await ttlafterfinished.start(server)
        async with aiohttp.ClientSession() as http:
            e = Env(server, http, clock, started)
            inf = Informer(server.store, e.job_rt)
            inf.add_handler(lambda typ, obj, prev: e.history.append(clone(obj.get("status") or {})))
            inf.start()
            try:
                yield e
            finally:
                inf.stop()
                for c in reversed(started):
                    await c.stop()


def conds(status: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in status.get("conditions") or ()}


async def test_finished_pods_pass_through_uncounted_then_the_job_completes(env):
    await env.create("two", completions=2, parallelism=2)
    pods = await eventually(lambda: len(env.pods()) == 2 and env.pods())
    assert all(p["metadata"]["finalizers"] == [ju.TRACKING_FINALIZER] for p in pods)
    first = pods[0]
    env.finish(first)
    await eventually(lambda: (env.c.get(env.job_rt, "default", "two").get("status") or {}).get("succeeded") == 1)
    uid = first["metadata"]["uid"]
    staged = [s for s in env.history if (s.get("uncountedTerminatedPods") or {}).get("succeeded") == [uid]]
    assert staged and "succeeded" not in staged[0]  # recorded as uncounted before it was counted
    assert ju.TRACKING_FINALIZER not in env.c.get(env.pod_rt, "default", first["metadata"]["name"])["metadata"].get(
        "finalizers", []
    )
    env.finish(pods[1])
    done = await eventually(
        lambda: ju.finished(env.c.get(env.job_rt, "default", "two")) and env.c.get(env.job_rt, "default", "two")
    )
    st = (await env.job("two"))["status"]
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert {c["reason"] for c in st["conditions"]} == {"CompletionsReached"}
    assert st["conditions"][1]["message"] == "Reached expected number of succeeded pods"
    assert st["succeeded"] == 2 and st["uncountedTerminatedPods"] == {} and st["ready"] == 0
    assert st["terminating"] == 0 and "active" not in st and "failed" not in st
    assert st["completionTime"] == st["conditions"][1]["lastTransitionTime"] and done


async def test_a_failure_past_the_limit_waits_for_terminating_pods_before_failed(env):
    await env.create("bad", completions=2, parallelism=2, backoffLimit=0)
    pods = await eventually(lambda: len(env.pods()) == 2 and env.pods())
    env.finish(pods[0], 1)
    target = await eventually(
        lambda: (
            "FailureTarget" in conds(env.c.get(env.job_rt, "default", "bad").get("status") or {})
            and env.c.get(env.job_rt, "default", "bad")
        )
    )
    st = target["status"]
    assert conds(st)["FailureTarget"] == ("True", "BackoffLimitExceeded") and "Failed" not in conds(st)
    assert st["terminating"] == 1  # the other pod was deleted and is still stopping
    env.stop_deleted()
    failed = await eventually(
        lambda: (
            ju.finished(env.c.get(env.job_rt, "default", "bad")) == "Failed" and env.c.get(env.job_rt, "default", "bad")
        )
    )
    st = failed["status"]
    assert conds(st)["Failed"] == ("True", "BackoffLimitExceeded") and st["failed"] == 2 and st["terminating"] == 0
    assert (
        next(c for c in st["conditions"] if c["type"] == "Failed")["message"]
        == "Job has reached the specified backoff limit"
    )
    assert "completionTime" not in st


async def test_back_off_between_retries_runs_on_the_clock(env):
    await env.create("retry", backoffLimit=3)
    [pod] = await eventually(lambda: env.pods())
    env.finish(pod, 1)
    await eventually(lambda: (env.c.get(env.job_rt, "default", "retry").get("status") or {}).get("failed") == 1)
    await env.advance(9)
    assert len(env.pods()) == 1  # only the failed one: 10 s back-off
    await env.advance(1.5)
    await eventually(lambda: len(env.pods()) == 2)


async def test_backoff_limit_per_index_fails_only_that_index(env):
    await env.create("perindex", completions=3, parallelism=3, completionMode="Indexed", backoffLimitPerIndex=1)
    pods = await eventually(lambda: len(env.pods()) == 3 and env.pods())
    by_index = {ju.pod_index(p): p for p in pods}
    assert {p["metadata"]["annotations"][ju.INDEX_FAILURE_COUNT] for p in pods} == {"0"}
    env.finish(by_index[0], 1)
    await settle()
    # the failed pod keeps its finalizer until its replacement exists (after a 10 s back-off)
    assert ju.tracked(env.c.get(env.pod_rt, "default", by_index[0]["metadata"]["name"]))
    await env.advance(11)
    repl = await eventually(lambda: [p for p in env.pods() if ju.pod_index(p) == 0 and ju.phase(p) != "Failed"])
    assert repl[0]["metadata"]["annotations"][ju.INDEX_FAILURE_COUNT] == "1"
    await eventually(lambda: not ju.tracked(env.c.get(env.pod_rt, "default", by_index[0]["metadata"]["name"])))
    env.finish(repl[0], 1)  # its second failure: the index has failed
    env.finish(by_index[1])
    env.finish(by_index[2])
    failed = await eventually(
        lambda: (
            ju.finished(env.c.get(env.job_rt, "default", "perindex")) == "Failed"
            and env.c.get(env.job_rt, "default", "perindex")
        )
    )
    st = failed["status"]
    assert st["failedIndexes"] == "0" and st["completedIndexes"] == "1,2" and st["succeeded"] == 2
    assert st["failed"] == 2
    assert conds(st)["Failed"] == ("True", "FailedIndexes") and conds(st)["FailureTarget"] == ("True", "FailedIndexes")


async def test_max_failed_indexes(env):
    await env.create(
        "maxfi", completions=4, parallelism=4, completionMode="Indexed", backoffLimitPerIndex=0, maxFailedIndexes=0
    )
    pods = await eventually(lambda: len(env.pods()) == 4 and env.pods())
    env.finish(pods[0], 2)
    await eventually(lambda: "FailureTarget" in conds(env.c.get(env.job_rt, "default", "maxfi").get("status") or {}))
    env.stop_deleted()
    failed = await eventually(
        lambda: (
            ju.finished(env.c.get(env.job_rt, "default", "maxfi")) == "Failed"
            and env.c.get(env.job_rt, "default", "maxfi")
        )
    )
    c = next(c for c in failed["status"]["conditions"] if c["type"] == "Failed")
    assert c["reason"] == "MaxFailedIndexesExceeded"
    assert c["message"] == "Job has exceeded the specified maximal number of failed indexes"


async def test_success_policy_completes_the_job_early(env):
    await env.create(
        "leader",
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0"}]},
    )
    pods = await eventually(lambda: len(env.pods()) == 3 and env.pods())
    env.finish(next(p for p in pods if ju.pod_index(p) == 0))
    met = await eventually(
        lambda: (
            "SuccessCriteriaMet" in conds(env.c.get(env.job_rt, "default", "leader").get("status") or {})
            and env.c.get(env.job_rt, "default", "leader")
        )
    )
    c = next(c for c in met["status"]["conditions"] if c["type"] == "SuccessCriteriaMet")
    assert (c["reason"], c["message"]) == ("SuccessPolicy", "Matched rules at index 0")
    assert "Complete" not in conds(met["status"])  # the other two are still stopping
    env.stop_deleted()
    done = await eventually(
        lambda: (
            ju.finished(env.c.get(env.job_rt, "default", "leader")) == "Complete"
            and env.c.get(env.job_rt, "default", "leader")
        )
    )
    st = done["status"]
    assert st["completedIndexes"] == "0" and st["succeeded"] == 1 and "failed" not in st  # stopped pods are no failures


async def test_active_deadline_fails_the_job(env):
    await env.create("slow", activeDeadlineSeconds=30)
    await eventually(lambda: len(env.pods()) == 1)
    await env.advance(31)
    await eventually(lambda: "FailureTarget" in conds(env.c.get(env.job_rt, "default", "slow").get("status") or {}))
    env.stop_deleted()
    failed = await eventually(
        lambda: (
            ju.finished(env.c.get(env.job_rt, "default", "slow")) == "Failed"
            and env.c.get(env.job_rt, "default", "slow")
        )
    )
    c = next(c for c in failed["status"]["conditions"] if c["type"] == "Failed")
    assert (c["reason"], c["message"]) == ("DeadlineExceeded", "Job was active longer than specified deadline")


async def test_suspend_and_resume(env):
    await env.create("later", suspend=True)
    st = await eventually(
        lambda: (
            conds(env.c.get(env.job_rt, "default", "later").get("status") or {}).get("Suspended")
            and env.c.get(env.job_rt, "default", "later")["status"]
        )
    )
    assert conds(st)["Suspended"] == ("True", "JobSuspended") and "startTime" not in st and not env.pods()
    env.clock[0] += 5
    async with env.http.patch(
        f"{env.server.url}{JOBS}/later",
        json={"spec": {"suspend": False}},
        headers={"Content-Type": "application/merge-patch+json"},
    ) as r:
        assert r.status == 200
    st = await eventually(
        lambda: (
            conds(env.c.get(env.job_rt, "default", "later").get("status") or {}).get("Suspended")
            == ("False", "JobResumed")
            and env.c.get(env.job_rt, "default", "later")["status"]
        )
    )
    assert st["startTime"] == meta.rfc3339(NOW + 5)
    await eventually(lambda: len(env.pods()) == 1)
    async with env.http.patch(
        f"{env.server.url}{JOBS}/later",
        json={"spec": {"suspend": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    ) as r:
        assert r.status == 200
    await eventually(lambda: not env.pods())
    env.stop_deleted()
    await settle()
    st = env.c.get(env.job_rt, "default", "later")["status"]
    assert "failed" not in st and conds(st)["Suspended"] == ("True", "JobSuspended")  # suspension is no failure


async def test_pod_replacement_policy_failed_waits_for_the_pod_to_stop(env):
    await env.create("strict", podReplacementPolicy="Failed")
    [pod] = await eventually(lambda: env.pods())
    env.c.delete(env.pod_rt, "default", pod["metadata"]["name"])
    await settle()
    assert not env.pods()  # the deleted pod is still terminating: no replacement yet
    st = env.c.get(env.job_rt, "default", "strict")["status"]
    assert st["terminating"] == 1
    env.stop_deleted()
    await eventually(lambda: len(env.pods()) == 1)  # replaced once it failed (a back-off of 10 s follows a failure)


async def test_ttl_after_finished_deletes_the_job_on_the_clock(env):
    await env.create("short", ttlSecondsAfterFinished=60)
    [pod] = await eventually(lambda: env.pods())
    env.finish(pod)
    await eventually(lambda: ju.finished(env.c.get(env.job_rt, "default", "short")) == "Complete")
    await env.advance(59)
    assert not env.c.get(env.job_rt, "default", "short")["metadata"].get("deletionTimestamp")
    await env.advance(2)
    # foreground deletion (no garbage collector runs here: the Job waits with its finalizer)
    j = await eventually(
        lambda: (
            env.c.get(env.job_rt, "default", "short")["metadata"].get("deletionTimestamp")
            and env.c.get(env.job_rt, "default", "short")
        )
    )
    assert "foregroundDeletion" in j["metadata"]["finalizers"]
