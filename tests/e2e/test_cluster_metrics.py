"""/metrics after a DRA pod ran: the scheduling SLI histogram, per-controller work queue
depth and adds, and mockkube's own counters (allocations, prepares, faults, nodes)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]


def scrape(cluster) -> dict[str, list]:
    with urllib.request.urlopen(cluster.url + "/metrics", timeout=30) as r:
        text = r.read().decode()
    out: dict[str, list] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def test_cluster_metrics_after_a_dra_pod(mockkube_fresh):
    k = mockkube_fresh.kubectl
    mockkube_fresh.inject({"kind": "latency", "delaySeconds": 0, "resources": ["secrets"]})
    k("get", "secrets")
    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-cats.yaml"))
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/pod-with-cats", "--timeout=60s")
    m = scrape(mockkube_fresh)
    sli = dict((tuple(sorted(lab.items())), v) for lab, v in m["scheduler_pod_scheduling_sli_duration_seconds_count"])
    assert sli[(("attempts", "1"),)] >= 1
    depth = {lab["name"] for lab, _ in m["workqueue_depth"]}
    adds = {lab["name"]: v for lab, v in m["workqueue_adds_total"]}
    assert depth == set(adds) and adds and max(adds.values()) > 0
    assert m["mockkube_dra_allocations_total"][0][1] >= 1
    assert ({"result": "success"}, 1.0) in m["mockkube_claim_prepares_total"] or any(
        lab == {"result": "success"} and v >= 1 for lab, v in m["mockkube_claim_prepares_total"]
    )
    assert m["mockkube_simulated_nodes"] == [({}, 4.0)]
    assert ({"kind": "latency"}, 1.0) in m["mockkube_faults_injected_total"]
    assert m["mockkube_faults_active"] == [({}, 1.0)]
