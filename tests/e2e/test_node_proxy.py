"""nodes/{name}/proxy: the kubelet's endpoints through the API server's node proxy, as
``kubectl get --raw`` (and metrics-server's scrape) reach them: healthz, pods, the resource
metrics and the stats summary, whose figures for a process container are its processes' CPU
and memory, the prober's metrics, and the kubelet's run (``kubectl create --raw``) as a real
command in the container."""

from __future__ import annotations

import json
import re
import time

import pytest

from mockkube.kubelet.runtime import sandbox

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sandbox.probe() != "", reason=f"no sandbox here: {sandbox.probe()}"),
]

PROFILE = {"nodes": [{"name": "worker"}], "deviceClasses": False}


def _sample(text: str, metric: str, pod: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(metric + "{") and f'pod="{pod}"' in line:
            return float(line.split()[1])
    return None


@pytest.mark.mockkube(profile=PROFILE)
def test_resource_metrics_show_what_a_process_uses(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    burn = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "burn"},
        "spec": {
            "containers": [
                {
                    "name": "burn",
                    "image": "busybox",
                    "command": ["sh", "-c", "while true; do :; done"],
                    "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 1},
                }
            ]
        },
    }
    c.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(burn))
    c.kubectl("run", "idle", "-n", ns, "--image=busybox")  # no command: simulated, uses nothing
    c.wait_for_pod_phase("burn", "Running", ns)
    c.wait_for_pod_phase("idle", "Running", ns)
    base = "/api/v1/nodes/worker/proxy"
    assert c.kubectl("get", "--raw", f"{base}/healthz").stdout == "ok"
    pods = json.loads(c.kubectl("get", "--raw", f"{base}/pods").stdout)
    assert pods["kind"] == "PodList" and {"burn", "idle"} <= {p["metadata"]["name"] for p in pods["items"]}

    deadline = time.monotonic() + 30
    while True:
        text = c.kubectl("get", "--raw", f"{base}/metrics/resource").stdout
        cpu = _sample(text, "container_cpu_usage_seconds_total", "burn")
        if cpu is not None and cpu >= 0.2:
            break
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
    assert "# TYPE container_cpu_usage_seconds_total counter" in text
    assert re.search(
        r'^container_memory_working_set_bytes\{container="burn",namespace="%s",pod="burn"\} \S+ \d+$' % ns, text, re.M
    )
    assert (_sample(text, "container_memory_working_set_bytes", "burn") or 0) > 100_000
    assert _sample(text, "pod_cpu_usage_seconds_total", "burn") == cpu
    assert _sample(text, "container_cpu_usage_seconds_total", "idle") == 0
    node_cpu = next(
        float(line.split()[1]) for line in text.splitlines() if line.startswith("node_cpu_usage_seconds_total ")
    )
    assert node_cpu >= cpu
    assert "resource_scrape_error 0" in text.splitlines()

    stats = json.loads(c.kubectl("get", "--raw", f"{base}/stats/summary").stdout)
    burn = next(p for p in stats["pods"] if p["podRef"]["name"] == "burn")
    assert burn["containers"][0]["cpu"]["usageCoreNanoSeconds"] >= 0.2e9
    assert burn["memory"]["workingSetBytes"] > 100_000
    assert stats["node"]["cpu"]["usageCoreNanoSeconds"] >= burn["cpu"]["usageCoreNanoSeconds"]
    probes = c.kubectl("get", "--raw", f"{base}/metrics/probes").stdout
    assert re.search(
        r'^prober_probe_total\{container="burn",.*probe_type="Readiness",result="successful"\} [1-9]', probes, re.M
    )

    # the kubelet's run: the command in the container's own namespaces (its PID 1 is the loop)
    run = c.kubectl("create", "--raw", f"{base}/run/{ns}/burn/burn?cmd=cat%20/proc/1/cmdline", "-f", "/dev/null")
    assert run.stdout.split("\0")[:2] == ["sh", "-c"]
    failed = c.kubectl("create", "--raw", f"{base}/run/{ns}/burn/burn?cmd=ls%20/nope", "-f", "/dev/null", check=False)
    assert failed.returncode == 1 and "command 'ls /nope' exited with" in failed.stderr

    missing = c.kubectl("get", "--raw", f"{base}/no-such-endpoint", check=False)
    assert missing.returncode == 1 and "NotFound" in missing.stderr
    gone = c.kubectl("get", "--raw", "/api/v1/nodes/no-such-node/proxy/healthz", check=False)
    assert 'nodes "no-such-node" not found' in gone.stderr
