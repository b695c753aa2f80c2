"""Probes and lifecycle hooks in the process runtime, as the kubelet runs them: readiness
flips the Ready condition both ways, a failing liveness probe restarts the container, a
startup probe holds the others back, postStart and preStop hooks run in the container;
failures are `Unhealthy` events with upstream's messages."""

from __future__ import annotations

import json
import time

import pytest

from mockkube.kubelet.runtime import sandbox

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sandbox.available() != "", reason=f"process runtime: {sandbox.available()}"),
]

PROFILE = {"nodes": [{"name": "proc"}], "deviceClasses": False, "kubelet": {"runtime": "process"}}


def ready(pod: dict) -> str:
    return next((c["status"] for c in pod["status"].get("conditions") or () if c["type"] == "Ready"), "")


def events(c, ns: str, pod: str, reason: str) -> list[str]:
    out = c.kubectl(
        "get", "events", "-n", ns, "--field-selector", f"involvedObject.name={pod},reason={reason}", "-o", "json"
    ).stdout
    return [e["message"] for e in json.loads(out)["items"]]


def wait_events(c, ns: str, pod: str, reason: str, timeout: float = 20) -> list[str]:
    deadline = time.monotonic() + timeout
    while not (got := events(c, ns, pod, reason)):
        assert time.monotonic() < deadline, f"no {reason} event for {pod}"
        time.sleep(0.2)
    return got


@pytest.mark.mockkube(profile=PROFILE)
def test_readiness_probe_flips_ready_both_ways(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata: {name: gate}
spec:
  containers:
  - name: c
    image: busybox
    command: [sleep, infinity]
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 1
      failureThreshold: 1
""",
    )
    pod = c.wait_for_pod_phase("gate", "Running", ns)
    assert ready(pod) == "False"
    msg = wait_events(c, ns, "gate", "Unhealthy")[0]
    assert msg == "Readiness probe failed: cat: /tmp/ready: No such file or directory\n"
    c.kubectl("exec", "-n", ns, "gate", "--", "touch", "/tmp/ready")
    pod = c.wait_for("pod", "gate", lambda p: ready(p) == "True", ns)
    assert pod["status"]["containerStatuses"][0]["ready"] is True
    c.kubectl("exec", "-n", ns, "gate", "--", "rm", "/tmp/ready")
    pod = c.wait_for("pod", "gate", lambda p: ready(p) == "False", ns)
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0  # readiness never restarts


@pytest.mark.mockkube(profile=PROFILE)
def test_liveness_failure_restarts_the_container(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata: {name: dead}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: [sleep, infinity]
    ports: [{name: health, containerPort: 1}]
    livenessProbe:
      httpGet: {path: /healthz, port: health}
      periodSeconds: 1
      failureThreshold: 2
""",
    )
    pod = c.wait_for("pod", "dead", lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("restartCount"), ns)
    ip = pod["status"]["podIP"]
    cs = pod["status"]["containerStatuses"][0]
    # sleep as PID 1 ignores SIGTERM: killed at the end of the grace period
    assert cs["lastState"]["terminated"]["exitCode"] == 137
    assert events(c, ns, "dead", "Unhealthy")[0] == (
        f'Liveness probe failed: Get "http://{ip}:1/healthz": dial tcp {ip}:1: connect: connection refused'
    )
    assert "Container c failed liveness probe, will be restarted" in events(c, ns, "dead", "Killing")


@pytest.mark.mockkube(profile=PROFILE)
def test_startup_probe_and_lifecycle_hooks(mockkube, mockkube_namespace, tmp_path):
    c, ns = mockkube, mockkube_namespace
    tmp_path.chmod(0o777)
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=f"""
apiVersion: v1
kind: Pod
metadata: {{name: hooks}}
spec:
  terminationGracePeriodSeconds: 5
  volumes: [{{name: out, hostPath: {{path: {tmp_path}}}}}]
  containers:
  - name: c
    image: busybox
    command: [sh, -c, 'trap "echo term >> /out/log; exit 0" TERM; while true; do sleep 0.1; done']
    volumeMounts: [{{name: out, mountPath: /out}}]
    lifecycle:
      postStart: {{exec: {{command: [sh, -c, 'echo poststart >> /out/log; touch /tmp/started']}}}}
      preStop: {{exec: {{command: [sh, -c, 'echo prestop >> /out/log']}}}}
    startupProbe:
      exec: {{command: [cat, /tmp/started]}}
      periodSeconds: 1
    readinessProbe:
      tcpSocket: {{port: 9}}
      periodSeconds: 1
      failureThreshold: 1
""",
    )
    pod = c.wait_for("pod", "hooks", lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("started"), ns)
    assert ready(pod) == "False"  # started, but nothing listens on port 9
    ip = pod["status"]["podIP"]
    assert f"Readiness probe failed: dial tcp {ip}:9: connect: connection refused" in wait_events(
        c, ns, "hooks", "Unhealthy"
    )
    assert (tmp_path / "log").read_text() == "poststart\n"
    c.kubectl("delete", "pod", "hooks", "-n", ns, "--wait=true")
    assert (tmp_path / "log").read_text() == "poststart\nprestop\nterm\n"  # preStop, then SIGTERM


@pytest.mark.mockkube(profile=PROFILE)
def test_failed_post_start_hook_kills_the_container(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata: {name: badhook}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: [sleep, infinity]
    lifecycle:
      postStart: {exec: {command: [sh, -c, 'echo no >&2; exit 3']}}
""",
    )
    msg = wait_events(c, ns, "badhook", "FailedPostStartHook")[0]
    uid = c.get("pod", "badhook", ns)["metadata"]["uid"]
    assert msg == (
        f'Exec lifecycle hook ([sh -c echo no >&2; exit 3]) for Container "c" in Pod "badhook_{ns}({uid})" '
        "failed - error: command 'sh -c echo no >&2; exit 3' exited with 3: no\n, message: \"no\\n\""
    )
    c.wait_for("pod", "badhook", lambda p: (p["status"].get("containerStatuses") or [{}])[0].get("restartCount"), ns)


SERVE = "import http.server, os; http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), type('H', (http.server.SimpleHTTPRequestHandler,), {'log_message': lambda *a: None})).serve_forever()"


@pytest.mark.mockkube(profile=PROFILE)
def test_a_service_reaches_a_process_pod_by_name_and_port_forward(mockkube, mockkube_namespace):
    """A pod reaches another through its Service's name (the Service's port, not the
    pod's), round the readiness gate; kubectl port-forward svc/ reaches it too."""
    import socket
    import subprocess
    import urllib.request

    from mockkube.testing import binaries

    c, ns = mockkube, mockkube_namespace
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=f"""
apiVersion: v1
kind: Pod
metadata: {{name: web, labels: {{app: web}}}}
spec:
  containers:
  - name: web
    image: python
    command: [python3, -c, "{SERVE}"]
    workingDir: /etc
    env: [{{name: PORT, value: "{port}"}}]
    ports: [{{name: http, containerPort: {port}}}]
    readinessProbe: {{httpGet: {{path: /hostname, port: http}}, periodSeconds: 1}}
---
apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: http}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: client}}
spec:
  containers: [{{name: c, image: python, command: [sleep, infinity]}}]
""",
    )
    c.wait_for("pod", "web", lambda p: ready(p) == "True", ns)
    c.wait_for_pod_phase("client", "Running", ns)
    get = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())"
    for url in ("http://web/hostname", f"http://web.{ns}.svc.cluster.local/hostname"):
        deadline = time.monotonic() + 15
        while True:  # the endpoints follow the readiness
            p = c.kubectl("exec", "-n", ns, "client", "--", "python3", "-c", get, url, check=False)
            if p.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert p.stdout == "web\n", p.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        local = s.getsockname()[1]
    pf = subprocess.Popen(
        [binaries.kubectl(), "port-forward", "-n", ns, "svc/web", f"{local}:80"],
        stdout=subprocess.PIPE,
        text=True,
        env=c.env(),
    )
    try:
        assert "Forwarding from" in pf.stdout.readline()
        assert urllib.request.urlopen(f"http://127.0.0.1:{local}/hostname", timeout=10).read() == b"web\n"
    finally:
        pf.kill()
        pf.wait()
