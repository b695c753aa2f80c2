"""`mockkube serve` runs the scheduler as a process of its own (``mockkube scheduler``), a
client of the API as kube-scheduler is: it schedules and allocates over HTTP, its metrics
and explanations are served by the API server, it follows the cluster clock, survives
resets, authenticates as system:kube-scheduler and stops with the server."""

from __future__ import annotations

import os
import re
import signal
import time
from datetime import datetime, timezone

import pytest

import mockkube
from mockkube.testing.waiting import until
from tests.procs import child_processes

pytestmark = pytest.mark.e2e

PROFILE = """
nodes:
- name: gpu-node
  count: 2
  drivers:
    gpu.example.com: {count: 2}
"""

CLAIMED = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpu}]}}]
"""

NO_CLASS = """
apiVersion: v1
kind: Pod
metadata: {name: NAME}
spec:
  resourceClaims: [{name: x, resourceClaimTemplateName: missing-class}]
  containers: [{name: app, image: busybox, resources: {claims: [{name: x}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: missing-class}
spec:
  spec:
    devices:
      requests:
      - name: x
        exactly: {deviceClassName: no-such-class}
"""


def scheduler_pids(cluster: mockkube.Cluster) -> list[int]:
    """Child processes of the server running `mockkube scheduler`."""
    return [k for k, argv in child_processes(cluster._proc.pid).items() if "scheduler" in argv]


def metric(cluster: mockkube.Cluster, name: str, **labels: str) -> float:
    text = cluster.http.get(cluster.url + "/metrics", timeout=30).text
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        m = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if m and all(part in m.group(1) for part in want.split(",")):
            return float(m.group(2))
    return 0.0


@pytest.fixture(scope="module")
def cluster():
    with mockkube.Cluster(PROFILE, subprocess=True) as c:
        yield c


def test_scheduling_happens_in_a_process_of_its_own(cluster):
    assert len(scheduler_pids(cluster)) == 1
    ns = cluster.create_namespace("sp")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=CLAIMED.replace("NAME", "p1"))
    pod = cluster.wait_for_pod_phase("p1", "Running", namespace=ns)
    assert pod["spec"]["nodeName"].startswith("gpu-node")
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = cluster.get("ResourceClaim", claim_name, namespace=ns)
    assert claim["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    managers = {(m["manager"], m.get("subresource", "")) for m in claim["metadata"]["managedFields"]}
    assert ("kube-scheduler", "status") in managers  # written over HTTP with its field manager
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in pod["status"]["conditions"])
    # the scheduler sends its events without waiting (as the event broadcaster does): the pod
    # may be Running before its Scheduled event is stored
    until(
        lambda: any(
            e.get("reason") == "Scheduled"
            for e in cluster.http.get(f"{cluster.url}/api/v1/namespaces/{ns}/events", timeout=30).json()["items"]
        ),
        what="the Scheduled event",
    )
    events = cluster.kubectl("get", "events", "-n", ns, "--field-selector", "involvedObject.name=p1").stdout
    assert "Successfully assigned" in events
    # its metrics are the API server's /metrics, as one scrape target
    assert metric(cluster, "scheduler_schedule_attempts_total", result="scheduled") >= 1


def test_explain_asks_the_scheduler_process(cluster):
    ns = cluster.create_namespace("sp")
    too_many = (
        CLAIMED.replace("NAME", "stuck")
        .replace("one-gpu", "three-gpus")
        .replace("deviceClassName: gpu.example.com}", "deviceClassName: gpu.example.com, count: 3}")
    )
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=too_many)
    until(
        lambda: any(
            c.get("reason") == "Unschedulable"
            for c in ((cluster.get("Pod", "stuck", namespace=ns) or {}).get("status") or {}).get("conditions") or ()
        ),
        timeout=30,
    )
    r = cluster.http.get(f"{cluster.url}/mockkube/v1/namespaces/{ns}/pods/stuck/explain", timeout=30)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["pod"] == f"{ns}/stuck" or ns in str(report["pod"]), report
    assert "gpu-node-0" in r.text  # the scheduler process's per-node verdicts
    text = cluster.http.get(f"{cluster.url}/mockkube/v1/namespaces/{ns}/pods/stuck/explain?format=text", timeout=30)
    assert "gpu.example.com" in text.text, text.text
    missing = cluster.http.get(f"{cluster.url}/mockkube/v1/namespaces/{ns}/pods/none/explain", timeout=30)
    assert missing.status_code == 404


def test_the_scheduler_process_reads_the_cluster_clock(cluster):
    cluster.clock.freeze()
    try:
        when = datetime(2031, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
        cluster.clock.set(when)
        ns = cluster.create_namespace("sp")
        cluster.kubectl("apply", "-n", ns, "-f", "-", input=NO_CLASS.replace("NAME", "late"))

        def failed_event():
            items = cluster.http.get(f"{cluster.url}/api/v1/namespaces/{ns}/events", timeout=30).json()["items"]
            return next((e for e in items if e["reason"] == "FailedScheduling"), None)

        ev = until(failed_event, timeout=30)
        assert ev["eventTime"].startswith("2031-05-06T07:08:09"), ev  # the scheduler's clock (its eventTime)
    finally:
        cluster.clock.unfreeze()


def test_reset_keeps_the_process_and_schedules_afterwards(cluster):
    before = scheduler_pids(cluster)
    ns = cluster.create_namespace("sp")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=CLAIMED.replace("NAME", "before"))
    cluster.wait_for_pod_phase("before", "Running", namespace=ns)
    cluster.reset()
    assert cluster.get("Namespace", ns) is None
    assert scheduler_pids(cluster) == before  # paused and started again, not respawned
    ns = cluster.create_namespace("sp")
    cluster.kubectl("apply", "-n", ns, "-f", "-", input=CLAIMED.replace("NAME", "after"))
    pod = cluster.wait_for_pod_phase("after", "Running", namespace=ns)
    assert pod["spec"]["nodeName"]


def test_rbac_applies_to_the_scheduler_process():
    """It authenticates as system:kube-scheduler: with its ClusterRoleBinding gone it is
    refused (scheduling errors), with it back it schedules."""
    with mockkube.Cluster(PROFILE, subprocess=True, auth=True) as c:
        crb = c.get("ClusterRoleBinding", "system:kube-scheduler")
        assert crb["subjects"][0]["name"] == "system:kube-scheduler"
        c.kubectl("delete", "clusterrolebinding", "system:kube-scheduler")
        ns = c.create_namespace("sp")
        c.kubectl("apply", "-n", ns, "-f", "-", input=CLAIMED.replace("NAME", "p"))
        until(lambda: metric(c, "scheduler_schedule_attempts_total", result="error") >= 1, timeout=30)
        assert not (c.get("Pod", "p", namespace=ns)["spec"].get("nodeName"))
        for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
            crb["metadata"].pop(k, None)
        import json

        c.kubectl("create", "-f", "-", input=json.dumps(crb))
        pod = c.wait_for_pod_phase("p", "Running", namespace=ns, timeout=60)
        assert pod["spec"]["nodeName"]


def test_sigterm_stops_the_scheduler_process_too():
    c = mockkube.Cluster(PROFILE, subprocess=True).start()
    try:
        pids = scheduler_pids(c)
        assert len(pids) == 1
        t0 = time.monotonic()
        c._proc.send_signal(signal.SIGTERM)
        c._proc.wait(5)
        assert time.monotonic() - t0 < 2.5
        until(
            lambda: (
                not os.path.exists(f"/proc/{pids[0]}")
                or open(f"/proc/{pids[0]}/stat").read().split(")")[1].split()[0] == "Z"
            ),
            timeout=5,
        )
    finally:
        c.stop()


def test_the_process_ends_with_its_channel_even_before_it_has_synced(tmp_path):
    """A scheduler process whose server is gone (its stdin closed) exits, also while it is
    still retrying its first lists (here: nothing listens at the kubeconfig's address)."""
    import socket
    import subprocess
    import sys

    from mockkube.server.server import write_kubeconfig

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "scheduler", "--control", "--kubeconfig", str(tmp_path / "kc")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        until(lambda: b"failed to list" in p.stderr.read1(65536), timeout=30)  # retrying, not synced
        p.stdin.close()
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
