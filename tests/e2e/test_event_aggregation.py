"""A kubelet retrying a failing prepare leaves one FailedPrepareDynamicResources event whose
count and lastTimestamp grow (client-go's EventCorrelator), as on a real cluster, rather than
one event with count 1 or one event per retry."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mockkube.machinery import meta
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
REASON = "FailedPrepareDynamicResources"


def _events(k) -> list[dict]:
    out = k("get", "events", "--field-selector", f"involvedObject.name=pod-with-cats,reason={REASON}", "-o", "json")
    return json.loads(out.stdout)["items"]


def _clock(k) -> float:
    return json.loads(k("get", "--raw", "/mockkube/v1/clock").stdout)["epoch"]


def test_repeated_prepare_failure_is_one_event_whose_count_grows(mockkube_fresh):
    c, k = mockkube_fresh, mockkube_fresh.kubectl
    c.inject({"kind": "prepare-failure", "drivers": ["gpu.example.com"], "message": "device busy (injected)"})
    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-cats.yaml"))
    # the pod worker retries with a growing back-off (0.2 s, 0.4 s, 0.8 s, ...)
    ev = until(lambda: [e for e in _events(k) if e["count"] >= 3], what="a FailedPrepare event counted 3 times")[0]
    assert len(_events(k)) == 1
    assert ev["type"] == "Warning" and ev["source"]["component"] == "kubelet"
    assert "device busy (injected)" in ev["message"]
    name, first_ts, seen = ev["metadata"]["name"], ev["firstTimestamp"], ev["count"]
    # each clock move makes the kubelet sync the pod again: one more failure, counted at the new time
    for _ in range(3):
        c.advance(60)
        moved_to = meta.rfc3339(_clock(k))
        again = until(
            lambda: [e for e in _events(k) if e["count"] > seen and e["lastTimestamp"] >= moved_to],  # noqa: B023
            what="the count and lastTimestamp to grow",
        )[0]
        assert again["metadata"]["name"] == name and again["firstTimestamp"] == first_ts
        seen = again["count"]
    assert len(_events(k)) == 1 and seen >= 6
    line = next(x for x in k("describe", "pod", "pod-with-cats").stdout.splitlines() if REASON in x)
    # kubectl's "(x6 over 3s)" (it measures from its own wall clock, not the moved cluster clock)
    assert re.search(r"\(x\d+ over ", line), line


def _scheduler_events(k, ns: str, pod: str, reason: str = "FailedScheduling") -> list[dict]:
    sel = f"involvedObject.name={pod},reason={reason}"
    return json.loads(k("get", "events", "-n", ns, "--field-selector", sel, "-o", "json").stdout)["items"]


def test_scheduler_events_are_events_k8s_io_series_that_kubectl_lists(mockkube_fresh):
    """kube-scheduler records through events.k8s.io/v1 with ``series``; the same objects are
    core/v1 events, so `kubectl get events` and `kubectl describe` show them."""
    c, k = mockkube_fresh, mockkube_fresh.kubectl
    ns = "default"
    k(
        "run",
        "huge",
        "--image=busybox",
        "--overrides",
        '{"spec":{"containers":[{"name":"huge","image":"busybox","resources":{"requests":{"cpu":"1000"}}}]}}',
    )
    (ev,) = until(lambda: _scheduler_events(k, ns, "huge"), what="a FailedScheduling event")
    assert ev["reason"] == "FailedScheduling" and ev["type"] == "Warning"
    assert ev["reportingComponent"] == "default-scheduler" and ev["action"] == "Scheduling"
    assert ev["eventTime"] and ev["source"] == {} and "series" not in ev
    assert "Insufficient cpu" in ev["message"]
    # kubectl's table shows it, its OBJECT and its message
    table = k("get", "events", "-n", ns, "--field-selector", "reason=FailedScheduling").stdout
    assert "pod/huge" in table and "Insufficient cpu" in table

    # no event concerns NodeResourcesFit's verdict (queueing hints), so the pod is retried
    # only by the 5-minute flush. A failure for the pod as it was at the previous one (the
    # same resourceVersion: the key includes it) makes a series; the first retry sees the
    # pod as our PodScheduled condition left it, so the series comes by the second.
    def failures() -> list[dict]:
        return _scheduler_events(k, ns, "huge")

    def tried(evs: list[dict]) -> int:
        return sum((e.get("series") or {}).get("count", 1) for e in evs)

    series: list[dict] = []
    for _ in range(2):
        before = tried(failures())
        c.advance(301)
        until(lambda: tried(failures()) > before, what="a retry after the 5-minute flush")
        series = [e for e in failures() if (e.get("series") or {}).get("count") == 2]
        if series:
            break
    assert series, failures()
    again = series[0]
    assert "Insufficient cpu" in again["message"] and again["series"]["lastObservedTime"]
    # the same object through events.k8s.io/v1
    (v1,) = [
        e
        for e in json.loads(k("get", "events.v1.events.k8s.io", "-n", ns, "-o", "json").stdout)["items"]
        if e["regarding"].get("name") == "huge" and e.get("series")
    ]
    assert v1["note"] == ev["message"] and v1["series"]["count"] == 2
    assert v1["reportingController"] == "default-scheduler"
    # a pod that fits: its Scheduled event, as `kubectl describe` lists it
    k("run", "small", "--image=busybox")
    until(
        lambda: _scheduler_events(k, ns, "small", "Scheduled"),
        what="a Scheduled event",
    )
    described = k("describe", "pod", "small").stdout
    assert re.search(r"Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default/small to ", described)
