"""The container runtimes side by side (same run, interleaved): what the process runtime
costs a user of ``mockkube serve`` beside the simulated one.

For each runtime, a fresh ``mockkube serve`` (two nodes) and, over HTTP:

- start-up: from the process start to ``mockkube ready at`` (the profile applied);
- 100 pods whose command is ``sleep infinity`` created at once, time until all are Running;
- memory: the server's RSS growth per pod, and (process runtime) the proportional set size
  (PSS) of the pods' processes (bubblewrap and the command) per pod;
- the server's CPU while the 100 pods idle (5 s);
- exec round trip: ``true`` through the official Python client's WebSocket exec, median and
  p90 of 30.

Run: ``.venv/bin/python tests/bench/bench_runtime.py [pods] [rounds]``.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import requests
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.procs import descendants  # noqa: E402


def start(workdir: str, runtime: str) -> tuple[subprocess.Popen, str, float]:
    path = os.path.join(workdir, f"{runtime}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(
            {"nodes": [{"name": "n", "count": 2}], "deviceClasses": False, "kubelet": {"runtime": runtime}}, f
        )
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--cluster", path],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = p.stdout.readline()
    up = time.perf_counter() - t0
    if not line.startswith("mockkube ready at "):
        raise RuntimeError(f"server did not start: {line}")
    return p, line.split()[-1], up


def pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pods_running(http: requests.Session, url: str, n: int, timeout: float = 120) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        items = http.get(f"{url}/api/v1/namespaces/default/pods").json()["items"]
        if sum(1 for p in items if (p.get("status") or {}).get("phase") == "Running") >= n:
            return time.perf_counter() - t0
        time.sleep(0.05)  # a benchmark observing progress; nothing in the server waits on it
    raise TimeoutError(f"{n} pods not Running after {timeout}s")


def exec_round_trips(url: str, pod: str, n: int = 30) -> list[float]:
    from kubernetes import client
    from kubernetes.stream import stream

    cfg = client.Configuration()
    cfg.host = url
    core = client.CoreV1Api(client.ApiClient(cfg))
    out = []
    for _ in range(n):
        t = time.perf_counter()
        stream(
            core.connect_get_namespaced_pod_exec,
            pod,
            "default",
            command=["true"],
            stdout=True,
            stderr=True,
            stdin=False,
            tty=False,
        )
        out.append(time.perf_counter() - t)
    return out


def measure(runtime: str, pods: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        p, url, up = start(d, runtime)
        try:
            http = requests.Session()
            time.sleep(1.0)  # let the start-up's garbage settle before the baseline
            rss0 = rss_kib(p.pid)
            t0 = time.perf_counter()
            for i in range(pods):
                body = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{i}"},
                    "spec": {
                        "terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}],
                    },
                }
                r = http.post(f"{url}/api/v1/namespaces/default/pods", data=json.dumps(body))
                r.raise_for_status()
            pods_running(http, url, pods)
            total = time.perf_counter() - t0
            c0, w0 = cpu_s(p.pid), time.perf_counter()
            time.sleep(5.0)
            idle = 100 * (cpu_s(p.pid) - c0) / (time.perf_counter() - w0)
            rss1 = rss_kib(p.pid)
            kids = [k for k, cmd in descendants(p.pid).items() if "scheduler" not in cmd]
            pss = sum(pss_kib(k) for k in kids)
            rt = sorted(exec_round_trips(url, "p0"))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)
    return {
        "runtime": runtime,
        "startup_s": up,
        "pods_running_s": total,
        "server_rss_kib_per_pod": (rss1 - rss0) / pods,
        "processes": len(kids),
        "pss_kib_per_pod": pss / pods,
        "idle_cpu_pct": idle,
        "exec_ms_median": 1000 * statistics.median(rt),
        "exec_ms_p90": 1000 * rt[int(len(rt) * 0.9)],
    }


def report(r: dict) -> str:
    return (
        f"{r['runtime']:9s} start-up {r['startup_s']:.2f}s; {r['pods_running_s']:.2f}s to Running; "
        f"server RSS +{r['server_rss_kib_per_pod']:.0f} KiB/pod; pod processes {r['processes']} "
        f"PSS {r['pss_kib_per_pod']:.0f} KiB/pod; idle CPU {r['idle_cpu_pct']:.1f}%; "
        f"exec {r['exec_ms_median']:.1f} ms median, {r['exec_ms_p90']:.1f} ms p90"
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    for _ in range(rounds):
        for runtime in ("simulated", "process"):
            print(report(measure(runtime, n)), flush=True)
