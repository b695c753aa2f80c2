"""The API never waits for the simulated cluster (DESIGN.md principle 6), as a user runs
it: `mockkube serve` with every component, the demo cluster, and a claim whose allocation
search explodes (30 of gpu.example.com: 4 GPUs and 36 partitions per node share counters).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from mockkube.testing import binaries
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

PATHOLOGICAL = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: thirty}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.example.com, count: 30}
---
apiVersion: v1
kind: Pod
metadata: {name: patho}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: thirty}]
  containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpus}]}}]
"""


def serve(tmp_path, *flags: str) -> tuple[subprocess.Popen, str, str]:
    kc = str(tmp_path / "kubeconfig")
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--kubeconfig", kc, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    assert line.startswith("mockkube ready at "), line + p.stderr.read()
    return p, line.split()[-1], kc


def kubectl(kc: str, *args: str, input: str | None = None) -> str:
    env = dict(os.environ, KUBECONFIG=kc)
    return subprocess.run(
        [binaries.kubectl(), *args], env=env, input=input, capture_output=True, text=True, check=True, timeout=30
    ).stdout


def request(url: str, method: str = "GET", body: dict | None = None) -> float:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()
    return time.perf_counter() - t


def p99(samples: list[float]) -> float:
    samples = sorted(samples)
    return samples[max(0, int(len(samples) * 0.99) - 1)]


def allocating(url: str) -> bool:
    """The pod's claim exists: from here on the scheduler is searching for it."""
    with urllib.request.urlopen(f"{url}/apis/resource.k8s.io/v1/namespaces/default/resourceclaims") as r:
        return bool(json.load(r)["items"])


@pytest.mark.parametrize("where", ["process", "thread"])  # mockkube serve --scheduler=...
def test_reads_and_writes_stay_prompt_and_sigterm_stops_during_an_endless_allocation(tmp_path, where):
    # no timeout: the search never ends
    p, url, kc = serve(tmp_path, "--dra-filter-timeout", "0", f"--scheduler={where}")
    try:
        kubectl(kc, "apply", "-f", "-", input=PATHOLOGICAL)
        until(lambda: allocating(url), what="the pod's claim")
        gets = [request(f"{url}/api/v1/namespaces/default/pods") for _ in range(200)]
        writes = [
            request(
                f"{url}/api/v1/namespaces/default/configmaps",
                "POST",
                {"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}},
            )
            for i in range(50)
        ]
        assert p99(gets) < 0.1, f"GET p99 {p99(gets) * 1000:.0f} ms"
        assert p99(writes) < 0.2, f"POST p99 {p99(writes) * 1000:.0f} ms"
        assert "patho" in kubectl(kc, "get", "pods", "--request-timeout=5s")
        assert p.poll() is None
    finally:
        t = time.perf_counter()
        p.send_signal(signal.SIGTERM)
        code = p.wait(10)
        took = time.perf_counter() - t
    assert code == 0
    assert took < 2.0, f"SIGTERM took {took:.2f}s"


@pytest.mark.parametrize("where", ["process", "thread"])
def test_sigint_stops_within_two_seconds_too(tmp_path, where):
    p, url, kc = serve(tmp_path, "--dra-filter-timeout", "0", f"--scheduler={where}")
    try:
        kubectl(kc, "apply", "-f", "-", input=PATHOLOGICAL)
        until(lambda: allocating(url), what="the pod's claim")
    finally:
        t = time.perf_counter()
        p.send_signal(signal.SIGINT)
        code = p.wait(10)
    assert code == 0 and time.perf_counter() - t < 2.0


def test_filter_timeout_flag_turns_the_search_into_a_scheduling_error(tmp_path):
    p, url, kc = serve(tmp_path, "--dra-filter-timeout", "300ms")
    try:
        kubectl(kc, "apply", "-f", "-", input=PATHOLOGICAL)

        def event():
            out = json.loads(
                kubectl(
                    kc,
                    "get",
                    "events",
                    "-o",
                    "json",
                    "--field-selector",
                    "involvedObject.name=patho,reason=FailedScheduling",
                )
            )
            return out["items"]

        (ev, *_) = until(event, what="FailedScheduling")
        assert ev["type"] == "Warning"
        assert ev["message"] in [
            f'running "DynamicResources" filter plugin: node gpu-node-{i}: timed out trying to allocate devices'
            for i in (0, 1)
        ]
        pod = json.loads(kubectl(kc, "get", "pod", "patho", "-o", "json"))
        (cond,) = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert cond["reason"] == "SchedulerError" and cond["message"] == ev["message"]
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0


def test_profile_sets_the_filter_timeout(tmp_path):
    import yaml

    from mockkube.config.profile import DEMO_PROFILE

    profile = dict(DEMO_PROFILE, scheduler={"filterTimeout": "250ms"})
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    p, url, kc = serve(tmp_path, "--cluster", str(tmp_path / "profile.yaml"))
    try:
        kubectl(kc, "apply", "-f", "-", input=PATHOLOGICAL)
        out = until(
            lambda: json.loads(
                kubectl(
                    kc,
                    "get",
                    "events",
                    "-o",
                    "json",
                    "--field-selector",
                    "involvedObject.name=patho,reason=FailedScheduling",
                )
            )["items"],
            what="FailedScheduling",
        )
        assert "timed out trying to allocate devices" in out[0]["message"]
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0


def test_sigterm_stops_a_5000_node_cluster_within_two_seconds(tmp_path):
    """A big cluster too: its kubelets, their plugin directories and a large heap."""
    import yaml

    (tmp_path / "big.yaml").write_text(
        yaml.safe_dump({"nodes": [{"name": "n", "count": 5000, "drivers": {"gpu.example.com": {"count": 2}}}]})
    )
    p, url, kc = serve(tmp_path, "--cluster", str(tmp_path / "big.yaml"))
    try:

        def published() -> bool:
            with urllib.request.urlopen(
                f"{url}/apis/resource.k8s.io/v1/resourceslices?limit=1&fieldSelector=spec.nodeName=n-4999"
            ) as r:
                return bool(json.load(r)["items"])

        until(published, timeout=120, what="the last node's slice")
    finally:
        t = time.perf_counter()
        p.send_signal(signal.SIGTERM)
        code = p.wait(10)
        took = time.perf_counter() - t
    assert code == 0 and took < 2.0, f"exit {code} after {took:.2f}s"
