"""kubectl exec and the Python client's stream over WebSocket (v5/v4 channel protocols):
output, stdin, exit codes, errors, attach."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, annotations: {mockkube.io/log: "started\\nlistening"}}
spec:
  containers:
  - name: c
    image: nginx
    env:
    - {name: GREETING, value: hello}
    - name: MY_NODE
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
"""


@pytest.fixture
def web(mockkube, mockkube_namespace):
    mockkube.kubectl("apply", "-n", mockkube_namespace, "-f", "-", input=POD)
    mockkube.wait_for_pod_phase("web", "Running", mockkube_namespace)
    return mockkube, mockkube_namespace


def test_kubectl_exec_output_stdin_and_exit_codes(web):
    c, ns = web
    node = c.get("pod", "web", ns)["spec"]["nodeName"]
    p = c.kubectl("exec", "-n", ns, "web", "--", "sh", "-c", "echo $GREETING; printenv MY_NODE; hostname")
    assert p.stdout == f"hello\n{node}\nweb\n"
    p = c.kubectl("exec", "-n", ns, "web", "--", "sh", "-c", "echo oops >&2; exit 3", check=False)
    assert p.returncode == 3 and "oops" in p.stderr and "command terminated with exit code 3" in p.stderr
    p = c.kubectl("exec", "-n", ns, "web", "--", "no-such-tool", check=False)
    assert p.returncode == 1 and p.stderr.startswith(  # containerd's words, as on kind
        "error: Internal error occurred: error executing command in container: failed to exec in container: "
        'failed to start exec "'
    )
    assert p.stderr.endswith(
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "no-such-tool": '
        "executable file not found in $PATH: unknown\n"
    ), p.stderr
    p = c.kubectl("exec", "-n", ns, "web", "--", "sh", "-c", "no-such-tool", check=False)
    assert p.returncode == 127 and "no-such-tool: not found" in p.stderr  # the shell's own words
    p = c.kubectl("exec", "-i", "-n", ns, "web", "--", "cat", input="from stdin\n")
    assert p.stdout == "from stdin\n"
    p = c.kubectl(
        "exec", "-i", "-n", ns, "web", "--", "sh", input="echo a\nfor i in $(seq 1 2); do echo $i; done\nexit 0\n"
    )
    assert p.stdout == "a\n1\n2\n"


def test_exec_errors_as_upstream(web):
    c, ns = web
    p = c.kubectl("exec", "-n", ns, "web", "-c", "nope", "--", "true", check=False)
    assert p.returncode == 1 and "container nope is not valid for pod web" in p.stderr
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
""",
    )
    c.wait_for_pod_phase("done", "Succeeded", ns)
    p = c.kubectl("exec", "-n", ns, "done", "--", "true", check=False)
    assert "cannot exec into a container in a completed pod; current phase is Succeeded" in p.stderr


def test_python_client_stream_exec_and_attach(web, mockkube_api_client):
    from kubernetes import client
    from kubernetes.stream import stream

    c, ns = web
    core = client.CoreV1Api(mockkube_api_client)
    out = stream(
        core.connect_get_namespaced_pod_exec,
        "web",
        ns,
        command=["sh", "-c", "seq 1 3"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert out.splitlines() == ["1", "2", "3"]
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        "web",
        ns,
        command=["sh", "-c", "exit 7"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.run_forever(timeout=10)
    assert resp.returncode == 7
    attach = stream(
        core.connect_get_namespaced_pod_attach,
        "web",
        ns,
        stdout=True,
        stderr=True,
        stdin=False,
        tty=False,
        _preload_content=False,
    )
    attach.update(timeout=5)
    assert "started" in attach.read_stdout(timeout=5)
    attach.close()


SIMULATED = {"nodes": [{"name": "sim", "kubelet": {"runtime": "simulated"}}], "deviceClasses": False}


def _exec_with_stdin_open(c, ns: str) -> None:
    import subprocess

    from mockkube.testing import binaries

    c.kubectl("run", "bb", "-n", ns, "--image=busybox")
    c.wait_for_pod_phase("bb", "Running", ns)
    p = subprocess.Popen(
        [binaries.kubectl(), "exec", "-i", "-n", ns, "bb", "--", "echo", "hi"],
        stdin=subprocess.PIPE,  # never written nor closed
        stdout=subprocess.PIPE,
        text=True,
        env=c.env(),
    )
    try:
        assert p.stdout is not None and p.stdout.readline() == "hi\n"
        assert p.wait(timeout=30) == 0
    finally:
        p.kill()
        p.wait()


@pytest.mark.mockkube(profile=SIMULATED)
def test_exec_with_stdin_open_ends_with_its_command_simulated(mockkube, mockkube_namespace):
    """kubectl exec -i whose stdin the client never closes: the command runs at once and the
    exec ends when it ends (a kubelet does not wait for stdin); the simulated shell waits
    only for a command that reads stdin."""
    _exec_with_stdin_open(mockkube, mockkube_namespace)


def test_exec_with_stdin_open_ends_with_its_command(mockkube, mockkube_namespace):
    """The same in the default runtime (a real command in the container's sandbox)."""
    _exec_with_stdin_open(mockkube, mockkube_namespace)
