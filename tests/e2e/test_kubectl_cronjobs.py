"""CronJobs on the cluster clock: a test moves the clock past a schedule instead of
waiting for it."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.mockkube(frozen_clock=True)]


def cronjob(name: str, extra: str = "", annotations: str = "") -> str:
    extra = "\n".join("  " + line for line in extra.splitlines())
    return f"""
apiVersion: batch/v1
kind: CronJob
metadata: {{name: {name}}}
spec:
  schedule: "*/5 * * * *"
{extra}
  jobTemplate:
    spec:
      template:
        metadata: {{annotations: {{{annotations}}}}}
        spec:
          restartPolicy: OnFailure
          containers: [{{name: c, image: busybox}}]
"""


def jobs(c, ns: str) -> list[dict]:
    return json.loads(c.kubectl("get", "jobs", "-n", ns, "-o", "json").stdout)["items"]


def test_a_cronjob_fires_when_the_clock_passes_its_schedule(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.clock.set(datetime(2030, 1, 1, 12, 1, tzinfo=timezone.utc))
    c.kubectl("apply", "-n", ns, "-f", "-", input=cronjob("tick", "successfulJobsHistoryLimit: 1"))
    assert c.get("cronjob", "tick", ns).get("status", {}) == {}
    c.clock.advance(timedelta(minutes=4))  # 12:05
    first = c.wait_for("cronjob", "tick", lambda o: bool((o.get("status") or {}).get("active")), ns)
    assert first["status"]["lastScheduleTime"] == "2030-01-01T12:05:00Z"
    name = first["status"]["active"][0]["name"]
    assert name == f"tick-{int(datetime(2030, 1, 1, 12, 5, tzinfo=timezone.utc).timestamp() // 60)}"
    job = c.get("job", name, ns)
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2030-01-01T12:05:00Z"
    c.wait_for("job", name, lambda j: (j.get("status") or {}).get("ready") == 1, ns)  # its pod runs...
    c.clock.advance(timedelta(seconds=2))  # ... for 1 s
    done = c.wait_for(
        "cronjob",
        "tick",
        lambda o: (o.get("status") or {}).get("lastSuccessfulTime") and not o["status"].get("active"),
        ns,
    )
    assert done["status"]["lastSuccessfulTime"].startswith("2030-01-01T12:05")
    c.clock.advance(timedelta(minutes=5))  # 12:10: a second job; the history limit keeps one
    second = c.wait_for(
        "cronjob", "tick", lambda o: (o.get("status") or {}).get("lastScheduleTime") == "2030-01-01T12:10:00Z", ns
    )["status"]["active"][0]["name"]
    c.wait_for("job", second, lambda j: (j.get("status") or {}).get("ready") == 1, ns)
    c.clock.advance(timedelta(seconds=2))
    c.wait_for("job", name, "deleted", ns)  # two successful jobs, a limit of one: the older goes


def test_forbid_skips_while_a_job_runs_and_suspend_stops_it(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.clock.set(datetime(2030, 1, 1, 12, 1, tzinfo=timezone.utc))
    long = cronjob("slow", "concurrencyPolicy: Forbid", '"mockkube.io/exit-after": "1h"')
    c.kubectl("apply", "-n", ns, "-f", "-", input=long)
    c.clock.advance(timedelta(minutes=4))
    c.wait_for("cronjob", "slow", lambda o: len((o.get("status") or {}).get("active") or ()) == 1, ns)
    c.clock.advance(timedelta(minutes=5))  # 12:10: the 12:05 job still runs
    _event_name(c, ns, "JobAlreadyActive")
    skipped = c.get("cronjob", "slow", ns)
    assert len(jobs(c, ns)) == 1 and skipped["status"]["lastScheduleTime"] == "2030-01-01T12:05:00Z"
    c.kubectl("patch", "cronjob", "slow", "-n", ns, "-p", '{"spec":{"suspend":true}}')
    c.clock.advance(timedelta(hours=2))
    assert len(jobs(c, ns)) == 1
    c.kubectl("create", "job", "manual", "-n", ns, "--from=cronjob/slow")
    assert c.get("job", "manual", ns)["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"


def _event_name(c, ns: str, reason: str) -> str:
    """The name of the first event with ``reason`` (events are named by the recorder)."""
    from mockkube.testing.waiting import until

    def find() -> str:
        out = c.kubectl("get", "events", "-n", ns, "--field-selector", f"reason={reason}", "-o", "name").stdout
        return out.split("/")[-1].strip() if out.strip() else ""

    return until(find, timeout=10, what=f"a {reason} event")
