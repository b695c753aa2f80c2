"""The process runtime's probe handlers against real servers on the host's network
(runtime/probes.py): gRPC health, HTTP status codes, TCP, and the threshold counting."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import grpc

from mockkube.kubelet.runtime import probes


def target(container: dict | None = None) -> probes.Target:
    return probes.Target(0, {}, "/", "10.244.0.9", container or {})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_grpc_health_probe():
    status = {"": b"\x08\x01", "db": b"\x08\x02"}  # SERVING, NOT_SERVING

    def check(request: bytes, context) -> bytes:
        name = request[2:].decode() if request else ""
        return status[name]

    handler = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(check)}
    )
    server = grpc.server(ThreadPoolExecutor(2), handlers=[handler])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        assert asyncio.run(probes.run({"grpc": {"port": port}}, target(), 2)) == (True, "")
        assert asyncio.run(probes.run({"grpc": {"port": port, "service": "db"}}, target(), 2)) == (
            False,
            'service unhealthy (responded with "NOT_SERVING")',
        )
    finally:
        server.stop(None)
    ok, out = asyncio.run(probes.run({"grpc": {"port": free_port()}}, target(), 0.3))
    assert not ok and out.startswith('timeout: failed to connect service "10.244.0.9:')


def test_http_and_tcp_probes():
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/ok" else 500)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    try:
        c = {"ports": [{"name": "web", "containerPort": port}]}
        assert asyncio.run(probes.run({"httpGet": {"path": "/ok", "port": "web"}}, target(c), 2)) == (True, "")
        assert asyncio.run(probes.run({"httpGet": {"path": "/bad", "port": port}}, target(), 2)) == (
            False,
            "HTTP probe failed with statuscode: 500",
        )
        assert asyncio.run(probes.run({"tcpSocket": {"port": port}}, target(), 2)) == (True, "")
    finally:
        srv.shutdown()
    closed = free_port()
    assert asyncio.run(probes.run({"tcpSocket": {"port": closed}}, target(), 2)) == (
        False,
        f"dial tcp 10.244.0.9:{closed}: connect: connection refused",
    )
    assert asyncio.run(probes.run({"httpGet": {"port": "nope"}}, target(), 2)) == (False, "port nope not found")


def test_thresholds():
    ps = probes.ProbeState("readinessProbe", "Readiness", {"successThreshold": 2, "failureThreshold": 2}, 0.0)
    assert not ps.record(True) and ps.result is None
    assert ps.record(True) and ps.result is True
    assert not ps.record(False) and ps.result is True
    assert ps.record(False) and ps.result is False
    assert [
        p.field_name
        for p in probes.states({"readinessProbe": {"tcpSocket": {"port": 1}}, "startupProbe": {"exec": {}}}, 5.0)
    ] == [
        "startupProbe",
        "readinessProbe",
    ]
