"""What a team's parallel suite gets from the pytest plugin, run with `-n 0` and with `-n 2`
on the default demo cluster (one server per xdist worker, started once and reset before
each test):

- the small suite (24 and 40 quick tests, as a new user writes them first: a namespace, a
  ConfigMap, a pod with a claim waited for with `wait_for_pod_phase`, kubectl through the
  fixture, a Deployment, a Job; target x1.5 at 24 tests, x1.8 at 40 on 2 cores);
- the e2e suite (40 tests, each applies a pod taking a GPU through a claim template, waits
  for it with kubectl and a watch, reads its logs, deletes it and waits for its claim to go;
  target x1.7).

Prints the wall time of each run and the speed-up, the load average before each pair (the
speed-up of `-n 2` is what other work on the machine leaves of the second core), and the
fixed costs, which other work slows but does not add: a worker's first test after its
process started, the per-worker cluster start, the per-test reset, and the pytest
process's exit after its last test.

    .venv/bin/python tests/bench/bench_pytest_plugin.py [--suite small|e2e|all] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

E2E_SUITE = '''
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


SMALL_SUITE = """
import pytest

KINDS = ("namespace", "configmap", "claim_pod", "kubectl", "deployment", "job")
TEMPLATE = {"metadata": {"name": "one-gpu"}, "spec": {"spec": {"devices": {"requests": [
    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
POD = {"metadata": {"name": "trainer"}, "spec": {
    "containers": [{"name": "main", "image": "trainer", "resources": {"claims": [{"name": "gpu"}]}}],
    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
DEPLOYMENT = {"metadata": {"name": "web"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "w", "image": "web"}]}}}}
JOB = {"metadata": {"name": "once"}, "spec": {"template": {"spec": {  # runs the kubelet's default 1 s
    "restartPolicy": "Never", "containers": [{"name": "j", "image": "job"}]}}}}


def create(c, path, body):
    r = c.http.post(c.url + path, json=body, timeout=30)
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("i", range(COUNT))
def test_quick(mockkube, mockkube_namespace, i):
    c, ns, kind = mockkube, mockkube_namespace, KINDS[i % len(KINDS)]
    if kind == "namespace":
        name = c.create_namespace("extra")
        assert c.get("namespace", name)["status"]["phase"] == "Active"
        c.delete_namespace(name)
    elif kind == "configmap":
        create(c, f"/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "cfg"}, "data": {"k": "v"}})
        assert c.get("configmap", "cfg", ns)["data"] == {"k": "v"}
    elif kind == "claim_pod":
        create(c, f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates", TEMPLATE)
        create(c, f"/api/v1/namespaces/{ns}/pods", POD)
        c.wait_for_pod_phase("trainer", "Running", ns)
    elif kind == "kubectl":
        c.kubectl("create", "configmap", "-n", ns, "settings", "--from-literal=mode=fast")
        assert "gpu-node-0" in c.kubectl("get", "nodes", "-o", "name").stdout
    elif kind == "deployment":
        create(c, f"/apis/apps/v1/namespaces/{ns}/deployments", DEPLOYMENT)
        c.wait_for("deployment", "web", "Available", ns)
    else:
        create(c, f"/apis/batch/v1/namespaces/{ns}/jobs", JOB)
        c.wait_for("job", "once", "Complete", ns)
"""

# Instruments each pytest process (the bench's, not the plugin's): when the process started
# (from /proc), when its first test started, when the last test's call ended.
TIMES_CONFTEST = """
import json, os, time

def _process_start():
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return time.time() - age

T = {"start": _process_start()}

def pytest_runtest_setup(item):
    T.setdefault("first_test", time.time())

def pytest_runtest_logreport(report):
    if report.when == "call":
        T["last_call"] = time.time()

def pytest_unconfigure(config):
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(os.environ["BENCH_TIMES"], name + ".json"), "w") as f:
        json.dump(T, f)
"""


def run(suite: str, workers: str, d: Path) -> dict:
    stats, times = Path(tempfile.mkdtemp(dir=d)), Path(tempfile.mkdtemp(dir=d))
    env = dict(
        os.environ,
        MOCKKUBE_POOL_STATS=str(stats),
        BENCH_TIMES=str(times),
        # a user's environment: pytest with xdist and mockkube's plugin. This venv also holds
        # mockkube's own dev dependencies (hypothesis, schemathesis, anyio, pytest-asyncio),
        # whose plugins cost up to 0.8 CPU-s in every pytest process
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    # A basetemp of the run's own: without it pytest ends a session by deleting the oldest of
    # the /tmp/pytest-of-USER/pytest-N trees beyond its newest three, which after a run of
    # mockkube's own suite (thousands of tests' directories) held the process 0.8-1.1 s after
    # its last test, a cost of the machine's history rather than of the plugin's exit
    basetemp = Path(tempfile.mkdtemp(dir=d)) / "basetemp"
    args = [
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "xdist",
        "-p",
        "mockkube",
        "-n",
        workers,
        f"--basetemp={basetemp}",
        suite,
    ]
    t0 = time.perf_counter()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=d, env=env, capture_output=True, text=True)
    end = time.time()
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(p.stdout[-3000:] + p.stderr[-2000:])
    pools = [json.loads(f.read_text()) for f in stats.glob("*.json")]  # MOCKKUBE_POOL_STATS
    tested = [json.loads(f.read_text()) for f in times.glob("*.json")]
    tested = [t for t in tested if "first_test" in t]  # the processes that ran tests
    last_call = max(t["last_call"] for t in tested)
    return {
        "wall": wall,
        "cpu": (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime),  # pytest, kubectl, servers
        "exit_after_last_test": end - last_call,
        "first_test": [t["first_test"] - t["start"] for t in tested if workers != "0"],  # xdist workers
        "starts": [s for w in pools for s in w.get("start_seconds", [])],
        "resets": [r for w in pools for r in w.get("reset_seconds", [])],
    }


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", choices=("small", "e2e", "all"), default="all")
    ap.add_argument("--rounds", type=int, default=1, help="-n 0 / -n 2 pairs per suite, interleaved")
    opts = ap.parse_args()
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "mockkube")], check=False)
    suites = []
    if opts.suite in ("small", "all"):
        suites += [
            ("small suite, 24 quick tests", "test_small_24.py", 1.5),
            ("small suite, 40 quick tests", "test_small_40.py", 1.8),
        ]
    if opts.suite in ("e2e", "all"):
        suites += [("e2e suite, 40 tests", "test_e2e.py", 1.7)]
    fixed: dict[str, list[float]] = {"exit": [], "first_test": [], "starts": [], "resets": []}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "conftest.py").write_text(TIMES_CONFTEST)
        (d / "test_small_24.py").write_text(SMALL_SUITE.replace("COUNT", "24"))
        (d / "test_small_40.py").write_text(SMALL_SUITE.replace("COUNT", "40"))
        (d / "test_e2e.py").write_text(E2E_SUITE)
        for label, path, target in suites:
            for _ in range(opts.rounds):
                load = os.getloadavg()[0]
                serial, parallel = run(path, "0", d), run(path, "2", d)
                print(
                    f"{label}: -n 0 {serial['wall']:.2f}s, -n 2 {parallel['wall']:.2f}s = "
                    f"x{serial['wall'] / parallel['wall']:.2f} (target x{target}); load average before {load:.2f}; "
                    f"CPU of all processes -n 0 {serial['cpu']:.1f}s, -n 2 {parallel['cpu']:.1f}s; "
                    f"exit after the last test {serial['exit_after_last_test'] * 1000:.0f} / "
                    f"{parallel['exit_after_last_test'] * 1000:.0f} ms",
                    flush=True,
                )
                for r in (serial, parallel):
                    fixed["exit"].append(r["exit_after_last_test"])
                    fixed["first_test"] += r["first_test"]
                    fixed["starts"] += r["starts"]
                    fixed["resets"] += r["resets"]
    print(
        f"pytest process exit after its last test: median {median_ms(fixed['exit'])}, "
        f"max {max(fixed['exit']) * 1000:.0f} ms over {len(fixed['exit'])} runs (target 200 ms)"
    )
    print(
        f"a worker's first test after the worker started: median {median_ms(fixed['first_test'])}, "
        f"max {max(fixed['first_test']) * 1000:.0f} ms over {len(fixed['first_test'])} (target 500 ms)"
    )
    print(
        f"per-worker cluster start (demo cluster, settled): median {median_ms(fixed['starts'])} over {len(fixed['starts'])}"
    )
    resets = sorted(fixed["resets"])
    print(
        f"per-test reset: median {statistics.median(resets) * 1000:.1f} ms, "
        f"p90 {resets[int(len(resets) * 0.9)] * 1000:.1f} ms over {len(resets)} resets"
    )


if __name__ == "__main__":
    main()
