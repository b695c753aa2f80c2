"""The default container runtime, as `mockkube serve` and the pytest plugin give it: the process
runtime wherever bubblewrap can make a sandbox. A container with a command (or args to an
image without an entrypoint) runs for real; one with no command whose image is not mapped
keeps the simulated behaviour for its main process (an event says so, no process runs) while
exec into it runs real commands in a sandbox made at the first exec."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from mockkube.kubelet.runtime import sandbox
from tests.e2e.test_process_runtime import sandboxes_of

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sandbox.probe() != "", reason=f"no sandbox here: {sandbox.probe()}"),
]

PROFILE = {"nodes": [{"name": "worker"}], "deviceClasses": False}  # no kubelet.runtime: the default


def _exec(c, ns: str, pod: str, *argv: str) -> subprocess.CompletedProcess:
    return c.kubectl("exec", "-n", ns, pod, "--", *argv, check=False)


def _events(c, ns: str, pod: str) -> list[dict]:
    out = c.kubectl("get", "events", "-n", ns, "--field-selector", f"involvedObject.name={pod}", "-o", "json").stdout
    return [e for e in json.loads(out)["items"] if e.get("reason")]


@pytest.mark.mockkube(profile=PROFILE)
def test_a_container_without_a_command_is_simulated_but_exec_is_real(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("run", "bb", "-n", ns, "--image=busybox")
    pod = c.wait_for_pod_phase("bb", "Running", ns)
    uid = pod["metadata"]["uid"]
    deadline = time.monotonic() + 30
    while not any(e["reason"] == "Simulated" for e in _events(c, ns, "bb")):
        assert time.monotonic() < deadline, _events(c, ns, "bb")
        time.sleep(0.1)
    simulated = next(e for e in _events(c, ns, "bb") if e["reason"] == "Simulated")
    assert 'Container image "busybox" is not mapped' in simulated["message"]
    assert sandboxes_of(uid) == []  # no process until an exec needs one

    dd = _exec(c, ns, "bb", "dd", "if=/dev/zero", "of=/dev/null", "bs=1k", "count=1")
    assert dd.returncode == 0 and "1+0 records out" in dd.stderr, dd
    bad = _exec(c, ns, "bb", "date", "foo")
    assert bad.returncode == 1 and "invalid date" in bad.stderr, bad
    listing = _exec(c, ns, "bb", "ls", "/")
    assert "bin" in listing.stdout.split(), listing
    # the sandbox is the pod's: its service account and hostname, shared by later execs
    shared = _exec(
        c, ns, "bb", "sh", "-c", "cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo; hostname"
    )
    assert shared.stdout.split() == [ns, "bb"], shared
    assert sandboxes_of(uid), "the exec's sandbox holds a process"
    # the main process stays simulated: the pod's status is the simulated runtime's
    st = c.get("pod", "bb", ns)["status"]["containerStatuses"][0]
    assert "running" in st["state"] and st["restartCount"] == 0

    c.kubectl("delete", "pod", "bb", "-n", ns, "--wait=true")
    deadline = time.monotonic() + 30
    while sandboxes_of(uid):
        assert time.monotonic() < deadline, "the exec sandbox outlived its pod"
        time.sleep(0.05)


@pytest.mark.mockkube(profile=PROFILE)
def test_args_to_an_image_without_an_entrypoint_run_and_logs_follow(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("run", "ticker", "-n", ns, "--image=busybox", "--", "sh", "-c", "while true; do echo tick; sleep 1; done")
    c.wait_for_pod_phase("ticker", "Running", ns)
    from mockkube.testing import binaries

    follow = subprocess.Popen(
        [binaries.kubectl(), "logs", "-f", "ticker", "-n", ns], stdout=subprocess.PIPE, text=True, env=c.env()
    )
    try:
        assert follow.stdout is not None
        assert [follow.stdout.readline() for _ in range(2)] == ["tick\n", "tick\n"]  # the second a second later
    finally:
        follow.kill()
        follow.wait()


@pytest.mark.mockkube(profile=PROFILE)
def test_annotations_still_drive_a_simulated_main_process(mockkube, mockkube_namespace):
    """The simulated behaviour is kept whole: mockkube.io/ annotations decide how it ends."""
    c, ns = mockkube, mockkube_namespace
    c.kubectl(
        "run",
        "ends",
        "-n",
        ns,
        "--image=nginx",
        "--restart=Never",
        "--annotations=mockkube.io/exit-after=0s",
        "--annotations=mockkube.io/exit-code=3",
    )
    pod = c.wait_for_pod_phase("ends", "Failed", ns)
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


def test_without_a_sandbox_the_default_falls_back_to_simulated(tmp_path, monkeypatch, caplog):
    """Where bubblewrap is missing or cannot make a sandbox, the default runtime is the
    simulated one, with one warning saying why; nothing else changes."""
    import logging

    import mockkube

    monkeypatch.setattr(sandbox, "probe", lambda: "/usr/bin/bwrap is not installed")
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps(PROFILE))
    with caplog.at_level(logging.WARNING, logger="mockkube.kubelet"):
        with mockkube.Cluster(str(path), workdir=str(tmp_path / "w")) as c:
            c.kubectl("run", "x", "--image=busybox", "--restart=Never", "--command", "--", "sh", "-c", "exit 3")
            pod = c.wait_for_pod_phase("x", "Succeeded", "default")  # simulated: runs to completion, exit 0
            assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    warnings = [r.getMessage() for r in caplog.records if "process runtime cannot run here" in r.getMessage()]
    assert warnings == [
        "the process runtime cannot run here (/usr/bin/bwrap is not installed): containers are simulated "
        "(set kubelet.runtime to silence this)"
    ]


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace per pod needs root")
@pytest.mark.mockkube(profile=PROFILE)
def test_two_pods_serve_on_one_port_and_port_forward_reaches_each(mockkube, mockkube_namespace):
    """The default pod network (as root): a namespace per pod, so two `python3 -m http.server
    8000` do not collide, and port-forward reaches each one's own."""
    import socket
    import urllib.request

    from mockkube.testing import binaries

    c, ns = mockkube, mockkube_namespace
    for name in ("one", "two"):
        c.kubectl("run", name, "-n", ns, "--image=python", "--", "python3", "-m", "http.server", "8000", "-d", "/etc")
    for name in ("one", "two"):
        c.wait_for_pod_phase(name, "Running", ns)
    for name in ("one", "two"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            local = s.getsockname()[1]
        pf = subprocess.Popen(
            [binaries.kubectl(), "port-forward", "-n", ns, f"pod/{name}", f"{local}:8000"],
            stdout=subprocess.PIPE,
            text=True,
            env=c.env(),
        )
        try:
            assert pf.stdout is not None and "Forwarding from" in pf.stdout.readline()
            # a server that has just started may not listen yet: port-forward retries for 2 s
            body = urllib.request.urlopen(f"http://127.0.0.1:{local}/hostname", timeout=10).read()
            assert body == f"{name}\n".encode()
        finally:
            pf.kill()
            pf.wait()
    for name in ("one", "two"):
        assert c.get("pod", name, ns)["status"]["containerStatuses"][0]["restartCount"] == 0
