"""What a team's parallel e2e suite gets from the pytest plugin: a suite of 40 e2e tests
(each applies a pod taking a GPU through a claim template, waits for it with kubectl and
a watch, reads its logs, deletes it and waits for its claim to go) run with `-n 0` and with `-n 2` on the default demo cluster, one server per
xdist worker started once and reset before each test.

Prints the wall time of each run and the speed-up (target: at least x1.7 on 2 cores),
plus the per-worker start time and the per-test reset time the workers measured.

    .venv/bin/python tests/bench/bench_pytest_plugin.py
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = '''
import pytest

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers: [{name: main, image: trainer, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"""


@pytest.mark.parametrize("i", range(40))
def test_pod_with_gpu(mockkube, mockkube_namespace, i):
    ns = mockkube_namespace
    mockkube.kubectl("apply", "-n", ns, "-f", "-", input=TEMPLATE)
    mockkube.kubectl("wait", "-n", ns, "--for=condition=Ready", "pod/trainer", "--timeout=30s")
    claim = mockkube.get("pod", "trainer", ns)["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    allocated = mockkube.wait_for_claim_allocated(claim, ns)
    assert allocated["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    mockkube.kubectl("logs", "-n", ns, "trainer")
    mockkube.kubectl("delete", "-n", ns, "pod/trainer", "--wait=true")
    mockkube.wait_for("resourceclaims", claim, "deleted", ns)  # the claim goes with its pod
'''


def run(workers: str, d: Path) -> tuple[float, float, list[dict]]:
    stats = d / f"stats-{workers}"
    stats.mkdir()
    env = dict(os.environ, MOCKKUBE_POOL_STATS=str(stats))
    t0 = time.perf_counter()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # hypothesis (a dev dependency of mockkube's own tests, not of a user's suite) loads its
    # pytest plugin into every process: 0.8 s of CPU each, which is not the plugin's to count
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            "-n",
            workers,
            "test_suite.py",
        ],
        cwd=d,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)  # pytest, kubectl, servers
    if p.returncode != 0:
        raise SystemExit(p.stdout[-3000:] + p.stderr[-2000:])
    return wall, cpu, [json.loads(f.read_text()) for f in sorted(stats.glob("*.json"))]


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "mockkube")], check=False)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "test_suite.py").write_text(SUITE)
        load = os.getloadavg()[0]
        serial, cpu0, s0 = run("0", d)
        parallel, cpu2, s2 = run("2", d)
    resets = [r for w in s0 + s2 for r in w["reset_seconds"]]
    starts = [s for w in s0 + s2 for s in w["start_seconds"]]
    print(
        f"40 e2e tests: -n 0 {serial:.1f}s, -n 2 {parallel:.1f}s = x{serial / parallel:.2f} faster "
        f"(target x1.70 on 2 cores; the same suite is the baseline)"
    )
    print(
        f"CPU of all processes (pytest, servers, kubectl): -n 0 {cpu0:.1f}s = {cpu0 / serial:.2f} cores busy, "
        f"-n 2 {cpu2:.1f}s = {cpu2 / parallel:.2f} cores busy; load average before the runs {load:.2f} "
        f"(other work on the machine takes cores from -n 2)"
    )
    print(
        f"per-worker cluster start (demo cluster, settled): median {statistics.median(starts) * 1000:.0f} ms "
        f"over {len(starts)} workers"
    )
    print(
        f"per-test reset: median {statistics.median(resets) * 1000:.1f} ms, "
        f"p90 {sorted(resets)[int(len(resets) * 0.9)] * 1000:.1f} ms over {len(resets)} resets"
    )


if __name__ == "__main__":
    main()
