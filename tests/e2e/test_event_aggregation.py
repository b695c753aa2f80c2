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
