"""The process runtime (``kubelet: {runtime: process}``): containers' commands run as host
processes in bubblewrap sandboxes; kubectl exec, logs (-f, --previous, --timestamps,
--tail), restarts with the kubelet's back-off on the cluster clock, Jobs that fail,
graceful deletion, and no process left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from mockkube.kubelet.runtime import sandbox

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sandbox.available() != "", reason=f"process runtime: {sandbox.available()}"),
]

PROFILE = {"nodes": [{"name": "proc"}], "deviceClasses": False, "kubelet": {"runtime": "process"}}


def pod_yaml(name: str, script: str, policy: str = "Always", extra: str = "") -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  restartPolicy: {policy}
  terminationGracePeriodSeconds: 5
  containers:
  - name: c
    image: busybox
    command: [sh, -c, {json.dumps(script)}]
{extra}
"""


def apply(c, ns: str, text: str) -> None:
    c.kubectl("apply", "-n", ns, "-f", "-", input=text)


def container_status(c, ns: str, name: str) -> dict:
    return (c.get("pod", name, ns)["status"].get("containerStatuses") or [{}])[0]


def sandboxes_of(*marks: str) -> list[int]:
    """Host processes whose command line names one of ``marks`` (a pod's uid names its
    sandboxes, bubblewrap's mounts of the pod's directory; a word of a script its shell)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if any(m.encode() in cmd for m in marks):
            out.append(int(pid))
    return out


@pytest.mark.mockkube(profile=PROFILE)
def test_exec_runs_real_commands_in_the_sandbox(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("create", "configmap", "cfg", "-n", ns, "--from-literal=greeting=hello")
    apply(
        c,
        ns,
        pod_yaml(
            "web",
            "echo started; exec sleep infinity",
            extra="""    workingDir: /work/app
    env: [{name: GREETING, valueFrom: {configMapKeyRef: {name: cfg, key: greeting}}}]
    volumeMounts:
    - {name: cfg, mountPath: /etc/cfg}
    - {name: scratch, mountPath: /scratch}
  - name: other
    image: busybox
    command: [sleep, infinity]
    volumeMounts: [{name: scratch, mountPath: /shared}]
  volumes:
  - {name: cfg, configMap: {name: cfg}}
  - {name: scratch, emptyDir: {}}""",
        ),
    )
    c.wait_for_pod_phase("web", "Running", ns)
    ex = ["exec", "-n", ns, "web", "-c", "c", "--"]
    p = c.kubectl(*ex, "dd", "if=/dev/zero", "of=/dev/null", "bs=1k", "count=1")
    assert p.returncode == 0 and "1024 bytes" in p.stderr
    p = c.kubectl(*ex, "date", "foo", check=False)
    assert p.returncode == 1 and "date: invalid date" in p.stderr and "command terminated with exit code 1" in p.stderr
    p = c.kubectl(*ex, "sh", "-c", "echo $GREETING; cat /etc/cfg/greeting; echo; pwd; hostname; echo $$")
    lines = p.stdout.splitlines()
    assert lines[:4] == ["hello", "hello", "/work/app", "web"]
    assert int(lines[4]) > 1  # its own PID namespace: PID 1 is the container's command
    p = c.kubectl(*ex, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    assert p.stdout == ns
    # the host's root is read-only, /tmp is the container's own, emptyDir is shared by the containers
    p = c.kubectl(*ex, "sh", "-c", "touch /usr/x 2>&1; echo $?; echo hi > /tmp/t && cat /tmp/t", check=False)
    assert "Read-only file system" in p.stdout and p.stdout.rstrip().endswith("hi")
    c.kubectl(*ex, "sh", "-c", "echo shared > /scratch/f")
    assert c.kubectl("exec", "-n", ns, "web", "-c", "other", "--", "cat", "/shared/f").stdout == "shared\n"
    # the other container's /tmp is its own: the first one's file is not there (only the server's
    # Python installation may be, bound back where the server runs from a checkout under /tmp)
    other_tmp = c.kubectl("exec", "-n", ns, "web", "-c", "other", "--", "ls", "/tmp").stdout.split()
    assert "t" not in other_tmp
    assert all(sys.prefix.startswith(f"/tmp/{name}") for name in other_tmp)
    p = c.kubectl("exec", "-i", "-n", ns, "web", "-c", "c", "--", "cat", input="from stdin\n")
    assert p.stdout == "from stdin\n"
    assert c.kubectl("logs", "-n", ns, "web", "-c", "c").stdout == "started\n"


@pytest.mark.mockkube(profile=PROFILE)
def test_kubectl_cp_both_ways(mockkube, mockkube_namespace, tmp_path):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("cp", "exec sleep infinity"))
    c.wait_for_pod_phase("cp", "Running", ns)
    (tmp_path / "in.txt").write_text("copied in\n")
    c.kubectl("cp", str(tmp_path / "in.txt"), f"{ns}/cp:/tmp/in.txt")  # tar in the container, over exec
    assert c.kubectl("exec", "-n", ns, "cp", "--", "cat", "/tmp/in.txt").stdout == "copied in\n"
    c.kubectl("cp", f"{ns}/cp:/tmp/in.txt", str(tmp_path / "out.txt"))
    assert (tmp_path / "out.txt").read_text() == "copied in\n"


@pytest.mark.mockkube(profile=PROFILE)
def test_logs_follow_the_process_output(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("ticker", "while true; do echo tick; sleep 0.2; done"))
    c.wait_for_pod_phase("ticker", "Running", ns)
    from mockkube.testing import binaries

    proc = subprocess.Popen(
        [binaries.kubectl(), "logs", "-f", "-n", ns, "ticker"], stdout=subprocess.PIPE, text=True, env=c.env()
    )
    got, t0 = [], time.monotonic()
    try:
        while len(got) < 5:
            line = proc.stdout.readline()
            assert line, "kubectl logs -f ended"
            got.append(line)
        assert got == ["tick\n"] * 5 and time.monotonic() - t0 >= 0.4  # they came as printed
    finally:
        proc.kill()
        proc.wait()
    p = c.kubectl("logs", "-n", ns, "ticker", "--tail=2", "--timestamps")
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and all(line.endswith("Z tick") for line in lines)
    assert c.kubectl("logs", "-n", ns, "ticker", "--limit-bytes=7").stdout == "tick\nti"
    assert c.kubectl("logs", "-n", ns, "ticker", "--since=1h").stdout.startswith("tick\ntick\n")
    assert c.kubectl("logs", "-n", ns, "ticker", "--since-time=2999-01-01T00:00:00Z").stdout == ""


@pytest.mark.mockkube(profile=PROFILE, frozen_clock=True)
def test_exit_codes_restarts_and_back_off_on_the_clock(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("crash", "echo run; exit 3"))
    # the first exit restarts at once; the second waits 10 s of the cluster's clock
    st = c.wait_for(
        "pod",
        "crash",
        lambda p: (
            ((p["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting", {}).get("reason")
            == "CrashLoopBackOff"
        ),
        ns,
    )
    cs = st["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1 and cs["lastState"]["terminated"]["exitCode"] == 3
    assert cs["lastState"]["terminated"]["reason"] == "Error" and st["status"]["phase"] == "Running"
    assert "back-off 10s restarting failed container=c" in cs["state"]["waiting"]["message"]
    assert c.kubectl("logs", "-n", ns, "crash").stdout == "run\n"
    assert c.kubectl("logs", "-n", ns, "crash", "--previous").stdout == "run\n"
    time.sleep(0.5)
    assert container_status(c, ns, "crash")["restartCount"] == 1  # nothing sleeps: the clock decides
    c.clock.advance(10)
    c.wait_for("pod", "crash", lambda p: p["status"]["containerStatuses"][0]["restartCount"] == 2, ns)
    cs = c.wait_for(
        "pod",
        "crash",
        lambda p: p["status"]["containerStatuses"][0]["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff",
        ns,
    )["status"]["containerStatuses"][0]
    assert "back-off 20s" in cs["state"]["waiting"]["message"]
    # restartPolicy Never: terminated with the code, the pod Failed; OnFailure with 0: Succeeded
    apply(c, ns, pod_yaml("once", "exit 3", policy="Never"))
    p = c.wait_for_pod_phase("once", "Failed", ns)
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (
        term["exitCode"] == 3 and term["reason"] == "Error" and p["status"]["containerStatuses"][0]["restartCount"] == 0
    )
    # no command, image not mapped: its main process is simulated (a Never pod's runs to
    # completion after the kubelet profile's runToCompletion, 1 s of the cluster's clock)
    apply(c, ns, pod_yaml("shell", "x", policy="Never").replace('    command: [sh, -c, "x"]\n', ""))
    c.wait_for_pod_phase("shell", "Running", ns)
    c.clock.advance(1)
    p = c.wait_for_pod_phase("shell", "Succeeded", ns)
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    apply(c, ns, pod_yaml("ok", "echo done", policy="OnFailure"))
    p = c.wait_for_pod_phase("ok", "Succeeded", ns)
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    # a command that does not exist: StartError, exit code 128
    apply(c, ns, pod_yaml("nocmd", "x", policy="Never").replace('[sh, -c, "x"]', "[no-such-command]"))
    p = c.wait_for_pod_phase("nocmd", "Failed", ns)
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["reason"] == "StartError" and term["exitCode"] == 128 and "no-such-command" in term["message"]


@pytest.mark.mockkube(profile=PROFILE, frozen_clock=True)
def test_a_failing_job_is_retried_up_to_its_backoff_limit(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(
        c,
        ns,
        """
apiVersion: batch/v1
kind: Job
metadata: {name: fails}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "echo failing; exit 1"]}]
""",
    )
    c.wait_for("job", "fails", lambda j: (j.get("status") or {}).get("failed", 0) >= 1, ns)
    c.clock.advance(20)  # the Job controller's back-off before it creates the next pod
    c.wait_for("job", "fails", "Failed", ns, timeout=30)
    pods = json.loads(c.kubectl("get", "pods", "-n", ns, "-l", "job-name=fails", "-o", "json").stdout)["items"]
    assert len(pods) == 2 and all(p["status"]["phase"] == "Failed" for p in pods)
    assert c.kubectl("logs", "-n", ns, pods[0]["metadata"]["name"]).stdout == "failing\n"


@pytest.mark.mockkube(profile=PROFILE)
def test_graceful_delete_writes_terminated_statuses_then_the_pod_goes(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("graceful", "trap 'echo bye; exit 0' TERM; echo up; while true; do sleep 0.1; done"))
    pod = c.wait_for("pod", "graceful", "Ready", ns)
    uid = pod["metadata"]["uid"]
    assert sandboxes_of(uid)
    from mockkube.testing import binaries

    watch = subprocess.Popen(
        [binaries.kubectl(), "get", "pod", "graceful", "-n", ns, "-w", "--output-watch-events", "-o", "json"],
        stdout=subprocess.PIPE,
        text=True,
        env=c.env(),
    )
    events: list[dict] = []

    def read() -> None:
        dec, buf = json.JSONDecoder(), ""
        for line in watch.stdout:
            buf += line
            try:
                obj, _ = dec.raw_decode(buf.strip())
            except ValueError:
                continue
            buf = ""
            events.append(obj)
            if obj["type"] == "DELETED":
                return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    time.sleep(0.5)
    c.kubectl("delete", "pod", "graceful", "-n", ns, "--wait=true", timeout=30)
    t.join(10)
    watch.kill()
    assert events and events[-1]["type"] == "DELETED"
    before = [e["object"] for e in events[:-1] if e["object"]["metadata"].get("deletionTimestamp")]
    final = before[-1]["status"]
    ready = {cnd["type"]: cnd["status"] for cnd in final["conditions"]}
    assert ready["Ready"] == "False"
    term = final["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 0  # it handled SIGTERM
    assert final["phase"] == "Succeeded"
    assert not sandboxes_of(uid)


@pytest.mark.parametrize("end", ["SIGKILL", "SIGTERM"])
def test_no_process_outlives_the_pod_the_node_or_the_server(tmp_path, end):
    """A server run as ``mockkube serve`` with the process runtime: a pod whose command
    ignores SIGTERM is force-deleted (its processes go); the server is killed with SIGKILL
    (its sandboxes die with it: --die-with-parent) or stopped with SIGTERM (it kills them)."""
    import mockkube

    profile = tmp_path / "p.yaml"
    profile.write_text(json.dumps(PROFILE))
    with mockkube.Cluster(str(profile), subprocess=True, workdir=str(tmp_path / "w")) as c:
        ns = "default"
        apply(c, ns, pod_yaml("stubborn", "trap '' TERM; : mark-stubborn; while true; do sleep 0.1; done"))
        apply(c, ns, pod_yaml("survivor", ": mark-survivor; sleep 100000 & wait"))
        uid = c.wait_for_pod_phase("stubborn", "Running", ns)["metadata"]["uid"]
        uid2 = c.wait_for_pod_phase("survivor", "Running", ns)["metadata"]["uid"]
        assert len(sandboxes_of(uid, "mark-stubborn")) >= 2 and len(sandboxes_of(uid2, "mark-survivor")) >= 2
        assert sandboxes_of("sleep 100000")  # the survivor's child
        c.kubectl("delete", "pod", "stubborn", "-n", ns, "--grace-period=0", "--force")
        deadline = time.monotonic() + 10
        while sandboxes_of(uid, "mark-stubborn") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not sandboxes_of(uid, "mark-stubborn")
        if end == "SIGKILL":
            c._proc.kill()  # the server dies without a word
        else:
            c._proc.terminate()
        assert c._proc.wait(10) in (-9, 0, -15)
        deadline = time.monotonic() + 10
        while sandboxes_of(uid2, "mark-survivor", "sleep 100000") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not sandboxes_of(uid2, "mark-survivor", "sleep 100000")


@pytest.mark.mockkube(profile=PROFILE)
def test_logs_follow_ends_with_the_container_and_init_containers_run_first(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(
        c,
        ns,
        pod_yaml(
            "steps",
            "cat /data/from-init; for i in 1 2 3; do echo $i; sleep 0.3; done",
            policy="Never",
            extra="""    volumeMounts: [{name: data, mountPath: /data}]
  initContainers:
  - name: prepare
    image: busybox
    command: [sh, -c, "echo prepared > /data/from-init; echo init done"]
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]""",
        ),
    )
    c.wait_for_pod_phase("steps", "Running", ns)
    p = c.kubectl("logs", "-f", "-n", ns, "steps", timeout=20)  # returns once the container ends
    assert p.stdout == "prepared\n1\n2\n3\n"
    pod = c.wait_for_pod_phase("steps", "Succeeded", ns)
    init = pod["status"]["initContainerStatuses"][0]["state"]["terminated"]
    assert init["exitCode"] == 0 and init["reason"] == "Completed"
    assert c.kubectl("logs", "-n", ns, "steps", "-c", "prepare").stdout == "init done\n"


@pytest.mark.mockkube(profile=PROFILE)
def test_port_forward_reaches_a_process_that_listens(mockkube, mockkube_namespace, tmp_path):
    import socket
    import sys
    import urllib.request

    from mockkube.testing import binaries

    c, ns = mockkube, mockkube_namespace
    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    pod_port, local = ports
    (tmp_path / "index.html").write_text("served from the pod\n")
    apply(
        c,
        ns,
        f"""
apiVersion: v1
kind: Pod
metadata: {{name: http}}
spec:
  containers:
  - name: c
    image: python
    command: [{sys.executable}, -u, -m, http.server, "{pod_port}", --bind, 127.0.0.1]
    workingDir: /srv/site
    volumeMounts: [{{name: site, mountPath: /srv/site}}]
  volumes: [{{name: site, hostPath: {{path: {tmp_path}, type: Directory}}}}]
""",
    )
    c.wait_for_pod_phase("http", "Running", ns)
    deadline = time.monotonic() + 20
    while "Serving HTTP" not in c.kubectl("logs", "-n", ns, "http").stdout:  # kubectl stops at a refused port
        assert time.monotonic() < deadline, c.kubectl("logs", "-n", ns, "http").stdout
        time.sleep(0.1)
    pf = subprocess.Popen(
        [binaries.kubectl(), "port-forward", "-n", ns, "pod/http", f"{local}:{pod_port}"],
        stdout=subprocess.PIPE,
        text=True,
        env=c.env(),
    )
    try:
        assert "Forwarding from" in pf.stdout.readline()
        body = urllib.request.urlopen(f"http://127.0.0.1:{local}/index.html", timeout=10).read()
        assert body == b"served from the pod\n"
        assert "GET /index.html" in c.kubectl("logs", "-n", ns, "http").stdout
    finally:
        pf.kill()
        pf.wait()


@pytest.mark.mockkube(profile=PROFILE)
def test_exec_with_a_terminal(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("tty", "exec sleep infinity"))
    c.wait_for_pod_phase("tty", "Running", ns)
    from kubernetes import client
    from kubernetes.stream import stream

    core = client.CoreV1Api(c.api_client)
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        "tty",
        ns,
        command=["sh", "-c", "test -t 0 && test -t 1 && echo interactive; exit 4"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=True,
        _preload_content=False,
    )
    resp.run_forever(timeout=10)
    out = resp.read_stdout()
    assert out == "interactive\r\n" and resp.returncode == 4  # a terminal's line discipline: \r\n
    # the client's terminal size (channel 4) is the command's
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        "tty",
        ns,
        command=["sh", "-c", "read line; stty size"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=True,
        _preload_content=False,
    )
    resp.write_channel(4, '{"Width": 132, "Height": 43}')
    time.sleep(0.3)
    resp.write_stdin("go\n")
    resp.run_forever(timeout=10)
    assert "43 132" in resp.read_stdout()


def test_a_reset_ends_every_process(mockkube_fresh_process):
    c = mockkube_fresh_process
    apply(c, "default", pod_yaml("before-reset", ": mark-reset; sleep 100000 & wait"))
    uid = c.wait_for_pod_phase("before-reset", "Running", "default")["metadata"]["uid"]
    assert sandboxes_of(uid, "mark-reset")
    c.reset()
    deadline = time.monotonic() + 10
    while sandboxes_of(uid, "mark-reset") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sandboxes_of(uid, "mark-reset")


def test_a_deleted_node_takes_its_processes(mockkube_fresh_process):
    c = mockkube_fresh_process
    apply(c, "default", pod_yaml("on-node", ": mark-node; sleep 100000 & wait"))
    uid = c.wait_for_pod_phase("on-node", "Running", "default")["metadata"]["uid"]
    assert sandboxes_of(uid, "mark-node")
    c.kubectl("delete", "node", "proc")
    deadline = time.monotonic() + 10
    while sandboxes_of(uid, "mark-node") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sandboxes_of(uid, "mark-node")


@pytest.fixture
def mockkube_fresh_process(tmp_path):
    import mockkube

    with mockkube.Cluster(PROFILE, workdir=str(tmp_path)) as c:
        yield c


POD_NETWORK = dict(PROFILE, kubelet={"runtime": "process", "network": "pod"})
SERVE = "import http.server as h, sys; h.HTTPServer(('127.0.0.1', 8000), h.SimpleHTTPRequestHandler).serve_forever()"
CALL = """
import os, ssl, sys, urllib.request
ca = ssl.create_default_context(cafile="/var/run/secrets/kubernetes.io/serviceaccount/ca.crt")
for url in sys.argv[1:]:
    url = url.replace("API", "https://%s:%s" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]))
    print(urllib.request.urlopen(url, timeout=5, context=ca).read().decode()[:40].replace("\\n", " "))
"""


@pytest.mark.mockkube(profile=POD_NETWORK)
def test_a_network_namespace_per_pod(mockkube, mockkube_namespace):
    """``network: pod``: each pod has its own loopback (two pods serve on port 8000), its
    containers share it, port-forward reaches it, the API server is forwarded into it."""
    import sys
    import urllib.request

    from mockkube.testing import binaries

    c, ns = mockkube, mockkube_namespace
    for name in ("a", "b"):
        apply(
            c,
            ns,
            f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - {{name: web, image: python, command: [{sys.executable}, -c, "{SERVE}"], workingDir: /etc}}
  - {{name: client, image: python, command: [sleep, infinity]}}
""",
        )
    for name in ("a", "b"):
        c.wait_for_pod_phase(name, "Running", ns)
    time.sleep(1)  # the servers start to listen
    p = c.kubectl(
        "exec",
        "-n",
        ns,
        "a",
        "-c",
        "client",
        "--",
        sys.executable,
        "-c",
        CALL,
        "http://127.0.0.1:8000/hostname",
        "API/version",
    )
    first, version = p.stdout.splitlines()
    assert first.strip() == "a" and '"major"' in version  # its pod's /etc/hostname; the API server
    with socket_free() as local:
        pf = subprocess.Popen(
            [binaries.kubectl(), "port-forward", "-n", ns, "pod/b", f"{local}:8000"],
            stdout=subprocess.PIPE,
            text=True,
            env=c.env(),
        )
        try:
            assert "Forwarding from" in pf.stdout.readline()
            assert urllib.request.urlopen(f"http://127.0.0.1:{local}/hostname", timeout=10).read() == b"b\n"
        finally:
            pf.kill()
            pf.wait()
    uids = [c.get("pod", name, ns)["metadata"]["uid"] for name in ("a", "b")]
    assert len(sandboxes_of(*uids)) >= 6  # each pod: its network's holder and two containers
    c.kubectl("delete", "pod", "a", "b", "-n", ns, "--grace-period=0", "--force")
    deadline = time.monotonic() + 10
    while sandboxes_of(*uids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sandboxes_of(*uids)


def socket_free():
    import contextlib
    import socket

    @contextlib.contextmanager
    def cm():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        yield port

    return cm()


@pytest.mark.mockkube(profile=PROFILE, frozen_clock=True)
def test_a_missing_command_crash_loops_and_a_missing_configmap_waits_to_mount(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("nocmd", "x").replace('[sh, -c, "x"]', "[no-such-command]"))
    pod = c.wait_for(
        "pod",
        "nocmd",
        lambda p: (
            (p["status"].get("containerStatuses") or [{}])[0].get("state", {}).get("waiting", {}).get("reason")
            == "CrashLoopBackOff"
        ),
        ns,
    )
    cs = pod["status"]["containerStatuses"][0]
    assert cs["lastState"]["terminated"]["reason"] == "StartError" and cs["restartCount"] == 1
    assert "back-off 10s" in cs["state"]["waiting"]["message"]
    apply(
        c,
        ns,
        pod_yaml(
            "nocm",
            "sleep 1000",
            extra="""    volumeMounts: [{name: cfg, mountPath: /cfg}]
  volumes: [{name: cfg, configMap: {name: later}}]""",
        ),
    )
    deadline = time.monotonic() + 15
    while 'configmap "later" not found' not in c.kubectl("get", "events", "-n", ns).stdout:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert c.get("pod", "nocm", ns)["status"]["phase"] == "Pending"
    c.kubectl("create", "configmap", "later", "-n", ns, "--from-literal=k=v")
    c.clock.advance(1)  # the retry's delay, on the cluster clock
    c.wait_for_pod_phase("nocm", "Running", ns, timeout=30)
    assert c.kubectl("exec", "-n", ns, "nocm", "--", "cat", "/cfg/k").stdout == "v"


@pytest.mark.mockkube(profile=PROFILE)
def test_attach_follows_what_the_container_prints(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    apply(c, ns, pod_yaml("talker", "echo hello; sleep 1; echo later; exec sleep infinity"))
    c.wait_for_pod_phase("talker", "Running", ns)
    from kubernetes import client
    from kubernetes.stream import stream

    core = client.CoreV1Api(c.api_client)
    attach = stream(
        core.connect_get_namespaced_pod_attach,
        "talker",
        ns,
        stdout=True,
        stderr=True,
        stdin=False,
        tty=False,
        _preload_content=False,
    )
    got = ""
    deadline = time.monotonic() + 10
    while "later" not in got and time.monotonic() < deadline:
        attach.update(timeout=1)
        got += attach.read_stdout(timeout=1) or ""
    attach.close()
    assert got == "hello\nlater\n"


MIXED = {
    "nodes": [{"name": "sim", "kubelet": {"runtime": "simulated"}}, {"name": "real"}],
    "deviceClasses": False,
}


@pytest.mark.mockkube(profile=MIXED)
def test_the_runtime_is_chosen_per_node(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    for node in ("sim", "real"):
        apply(c, ns, pod_yaml(f"on-{node}", "exit 3", policy="Never", extra=f"  nodeName: {node}"))
    real = c.wait_for_pod_phase("on-real", "Failed", ns)
    assert real["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    sim = c.wait_for_pod_phase("on-sim", "Succeeded", ns)  # simulated: runs to completion, exit code 0
    assert sim["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def _tiny_root(d) -> None:
    """A root filesystem of a few host programs and the libraries they load, and a file of
    its own: an image's contents, as a driver author's build output would be."""
    import shutil

    for prog in ("sh", "cat", "ls", "sleep"):
        exe = os.path.realpath(shutil.which(prog) or f"/bin/{prog}")
        (d / "bin").mkdir(parents=True, exist_ok=True)
        shutil.copy2(exe, d / "bin" / prog)
        libs = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
        for word in libs.split():
            if word.startswith("/") and os.path.exists(word):
                target = d / word.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(os.path.realpath(word), target)
    (d / "etc").mkdir(exist_ok=True)
    (d / "etc" / "motd").write_text("hello from the image\n")


def test_an_image_mapped_to_a_root_filesystem_runs_in_it(tmp_path):
    """``kubelet.images`` maps an image to a directory: its containers see that root, not
    the host's (the host's python3 is not there), with the pod's volumes mounted in it; exec
    runs in it too. The mapping's command is the image's entrypoint."""
    import mockkube

    root = tmp_path / "rootfs"
    _tiny_root(root)
    profile = dict(PROFILE)
    profile["kubelet"] = {
        "runtime": "process",
        "images": {
            "registry.example.com/tiny:dev": str(root),
            "registry.example.com/tiny-entry:dev": {"root": str(root), "command": ["/bin/sh", "-c"]},
        },
    }
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps(profile))
    with mockkube.Cluster(str(path), workdir=str(tmp_path / "w")) as c:
        ns = "default"
        c.kubectl("create", "configmap", "cfg", "-n", ns, "--from-literal=k=v")
        c.kubectl(
            "apply",
            "-f",
            "-",
            input="""
apiVersion: v1
kind: Pod
metadata: {name: tiny, namespace: default}
spec:
  restartPolicy: Never
  volumes: [{name: cfg, configMap: {name: cfg}}]
  containers:
  - name: a
    image: registry.example.com/tiny:dev
    command: [/bin/sh, -c, 'cat /etc/motd /cfg/k; echo; ls /usr/bin/python3 || echo no-python; sleep 1000']
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  - name: b
    image: registry.example.com/tiny-entry:dev
    args: ['cat /etc/motd; sleep 1000']
""",
        )
        c.wait_for_pod_phase("tiny", "Running", ns)
        deadline = time.monotonic() + 30
        while "no-python" not in (out := c.kubectl("logs", "tiny", "-c", "a", "-n", ns).stdout):
            assert time.monotonic() < deadline, out
            time.sleep(0.1)
        assert out.startswith("hello from the image\nv\n"), out
        deadline = time.monotonic() + 30
        while "hello" not in (out := c.kubectl("logs", "tiny", "-c", "b", "-n", ns).stdout):
            assert time.monotonic() < deadline, out
            time.sleep(0.1)
        assert out == "hello from the image\n"
        ls = c.kubectl("exec", "tiny", "-c", "a", "-n", ns, "--", "ls", "/bin", check=False)
        assert ls.stdout.split() == ["cat", "ls", "sh", "sleep"], ls
