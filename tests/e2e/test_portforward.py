"""pods/portforward: ``kubectl port-forward`` (SPDY/3.1 tunnelled over WebSocket) and the
Python client's ``portforward`` (v4.channel.k8s.io) reach the simulated HTTP responder on
a declared containerPort, or a real address the pod's annotation maps the port to."""

from __future__ import annotations

import http.server
import subprocess
import threading
import urllib.request

import pytest

from mockkube.testing import binaries
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    mockkube.io/http-response.8080: "hello from the pod\\n"
spec:
  containers:
  - {name: c, image: nginx, ports: [{containerPort: 8080}]}
"""


@pytest.fixture
def web(mockkube, mockkube_namespace):
    mockkube.kubectl("apply", "-n", mockkube_namespace, "-f", "-", input=POD)
    mockkube.wait_for_pod_phase("web", "Running", mockkube_namespace)
    return mockkube, mockkube_namespace


@pytest.fixture
def port_forward(web):
    """``kubectl port-forward`` in the background; returns the local port it listens on."""
    c, ns = web
    procs = []

    def start(*args: str) -> int:
        p = subprocess.Popen(
            [binaries.kubectl(), "port-forward", "-n", ns, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=c.env(),
        )
        procs.append(p)
        line = p.stdout.readline()  # "Forwarding from 127.0.0.1:NNNNN -> 8080"
        assert line.startswith("Forwarding from 127.0.0.1:"), line + p.stderr.read()
        return int(line.split(":")[1].split()[0])

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)
        p.stdout.close()
        p.stderr.close()


def test_kubectl_port_forward_reaches_the_simulated_http_responder(port_forward):
    port = port_forward("pod/web", ":8080")
    for _ in range(2):  # two connections through one port-forward
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
            assert r.status == 200 and r.read() == b"hello from the pod\n"


def test_kubectl_port_forward_to_a_mapped_real_address(web, port_forward):
    c, ns = web

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"real")

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        c.kubectl("annotate", "-n", ns, "pod", "web", f"mockkube.io/port-forward.9000=127.0.0.1:{srv.server_port}")
        port = port_forward("web", ":9000")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.read() == b"real"
    finally:
        srv.shutdown()
        srv.server_close()


def _http_get(sock) -> bytes:
    sock.setblocking(True)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := sock.recv(1024):
        data += chunk
    sock.close()
    return data


def test_python_client_portforward(web, mockkube_api_client):
    from kubernetes import client
    from kubernetes.stream import portforward

    c, ns = web
    core = client.CoreV1Api(mockkube_api_client)
    pf = portforward(core.connect_get_namespaced_pod_portforward, "web", ns, ports="8080")
    data = _http_get(pf.socket(8080))
    assert data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"hello from the pod\n")
    assert pf.error(8080) is None
    pf = portforward(core.connect_get_namespaced_pod_portforward, "web", ns, ports="81")
    sock = pf.socket(81)
    sock.setblocking(True)
    assert sock.recv(1024) == b""
    sock.close()
    until(lambda: pf.error(81) is not None, what="the error channel")
    assert "connect: connection refused" in pf.error(81)


def test_well_known_image_and_probe_ports(web, mockkube_api_client):
    """nginx serves its welcome page on 80 (the Python client's own port-forward e2e test
    relies on it); a probe's tcpSocket port listens too."""
    from kubernetes import client
    from kubernetes.stream import portforward

    c, ns = web
    core = client.CoreV1Api(mockkube_api_client)
    data = _http_get(portforward(core.connect_get_namespaced_pod_portforward, "web", ns, ports="80").socket(80))
    assert data.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/html") and b"<h1>Welcome to nginx!</h1>" in data


def test_listeners_of_a_pod():
    from mockkube.kubelet.images import repository
    from mockkube.kubelet.portforward import listeners

    pod = {
        "spec": {
            "containers": [
                {
                    "image": "docker.io/library/nginx:1.27",
                    "ports": [{"containerPort": 8443, "name": "https"}],
                    "startupProbe": {"tcpSocket": {"port": 1235}},
                    "readinessProbe": {"httpGet": {"port": "https"}},
                },
                {"image": "python", "livenessProbe": {"httpGet": {"port": 9000}}},
            ]
        }
    }
    ports = listeners(pod)
    assert sorted(ports) == [80, 1235, 8443, 9000]
    assert ports[80][0] == "text/html" and ports[1235] is None
    assert repository("registry.k8s.io/nginx@sha256:abc") == "nginx" and repository("python:3.12") == "python"


PROGRAM_PROFILE = {
    "nodes": [{"name": "n1"}],
    "deviceClasses": False,
    "kubelet": {"runToCompletion": "1h"},
}
ECHO = """
import socketserver, sys
print("listening", flush=True)
class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while data := self.request.recv(1024):
            self.request.sendall(data)
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), Echo).serve_forever()
"""


@pytest.mark.mockkube(profile=PROGRAM_PROFILE)
def test_real_python_program_behind_port_forward(mockkube, mockkube_namespace, mockkube_api_client):
    """The default process runtime: the container's Python program (from a ConfigMap volume)
    runs for real; port-forward reaches it byte for byte, other ports are refused."""
    import socket

    from kubernetes import client
    from kubernetes.stream import portforward

    with socket.socket() as s:  # a free port for the program
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    core = client.CoreV1Api(mockkube_api_client)
    ns = mockkube_namespace
    core.create_namespaced_config_map(ns, {"metadata": {"name": "echo"}, "data": {"echo.py": ECHO}})
    core.create_namespaced_pod(
        ns,
        {
            "metadata": {"name": "echo"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "echo",
                        "image": "python",
                        "command": ["python", "/app/echo.py", str(port)],
                        "volumeMounts": [{"name": "app", "mountPath": "/app"}],
                    }
                ],
                "volumes": [{"name": "app", "configMap": {"name": "echo"}}],
            },
        },
    )
    mockkube.wait_for_pod_phase("echo", "Running", ns)
    pf = portforward(core.connect_get_namespaced_pod_portforward, "echo", ns, ports=f"{port},{port + 1}")
    sock = pf.socket(port)
    sock.setblocking(True)
    sock.sendall(b"GET exactly these bytes")
    got = b""
    while len(got) < len(b"GET exactly these bytes"):
        chunk = sock.recv(1024)
        assert chunk, "connection closed"
        got += chunk
    assert got == b"GET exactly these bytes"
    refused = pf.socket(port + 1)
    refused.setblocking(True)
    assert refused.recv(1024) == b""
    until(lambda: pf.error(port + 1) is not None, what="the refused port's error")
    assert core.read_namespaced_pod_log("echo", ns) == "listening\n"  # what the program printed
    core.delete_namespaced_pod("echo", ns, grace_period_seconds=0)
