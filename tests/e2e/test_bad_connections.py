"""Bad connections cost no lasting memory (`mockkube serve --tls`, the demo cluster): plain
HTTP sent to the TLS port leaves each failed connection's SSL objects in a reference cycle
(through the exception's traceback), which the collector's pacing by memory and the release
of freed buffers hand back, while normal requests keep answering."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

GROWTH_LIMIT_MB = 50


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _settled_rss(pid: int, below: float, within: float) -> float:
    """The RSS once it is below ``below`` MB, or the last reading after ``within`` seconds."""
    deadline = time.monotonic() + within
    rss = _rss_mb(pid)
    while rss >= below and time.monotonic() < deadline:
        time.sleep(0.2)  # polling a reading the server cannot announce
        rss = _rss_mb(pid)
    return rss


@pytest.fixture
def tls_server(tmp_path):
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkube",
            "serve",
            "--port",
            "0",
            "--tls",
            "--cert-dir",
            str(tmp_path),
            "--kubeconfig",
            str(tmp_path / "kubeconfig"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    assert line.startswith("mockkube ready at https://"), line
    url = line.split()[-1]
    ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    ctx.check_hostname = False
    try:
        yield p, url, ctx
    finally:
        p.terminate()
        p.wait(10)


def _get_ms(url: str, ctx: ssl.SSLContext) -> float:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url + "/readyz", context=ctx, timeout=5) as r:
        assert r.status == 200
    return (time.perf_counter() - t0) * 1000


def test_plain_http_to_the_tls_port_leaves_no_memory_behind(tls_server):
    p, url, ctx = tls_server
    port = int(url.rsplit(":", 1)[1])
    _settled_rss(p.pid, below=0, within=1.5)  # past the post-start collection and freeze
    before = _rss_mb(p.pid)
    for i in range(1000):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                s.recv(100)
            except OSError:
                pass
        if i % 250 == 0:
            assert _get_ms(url, ctx) < 1000  # generous under a loaded CI machine; the figure is printed
    after = _settled_rss(p.pid, below=before + GROWTH_LIMIT_MB, within=10)
    ms = min(_get_ms(url, ctx) for _ in range(5))
    print(f"RSS {before:.0f} MB -> {after:.0f} MB after 1,000 plain-HTTP requests to the TLS port; GET {ms:.1f} ms")
    assert after - before < GROWTH_LIMIT_MB
    assert ms < 100


def test_half_sent_requests_and_abandoned_handshakes_give_their_memory_back(tls_server):
    p, url, ctx = tls_server
    port = int(url.rsplit(":", 1)[1])
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE

    def half_sent(n: int) -> list[ssl.SSLSocket]:
        held = []
        for _ in range(n):  # a TLS connection each, holding half a request line
            s = client.wrap_socket(socket.create_connection(("127.0.0.1", port)))
            s.sendall(b"GET /api/v1/namesp")
            held.append(s)
        return held

    def abandoned(n: int) -> None:
        for _ in range(n):  # handshakes abandoned after the ClientHello
            raw = socket.create_connection(("127.0.0.1", port))
            raw.setblocking(False)
            s = client.wrap_socket(raw, do_handshake_on_connect=False)
            try:
                s.do_handshake()
            except ssl.SSLWantReadError:
                pass
            raw.close()

    for s in half_sent(20):  # a first few: what the first use of these paths allocates is no leak
        s.close()
    abandoned(20)
    _settled_rss(p.pid, below=0, within=1.5)
    before = _rss_mb(p.pid)
    held = half_sent(200)
    assert _get_ms(url, ctx) < 1000
    holding = _rss_mb(p.pid)
    for s in held:
        s.close()
    abandoned(500)
    after = _settled_rss(p.pid, below=before + 10, within=60)
    print(
        f"RSS {before:.0f} MB, {holding:.0f} MB holding 200 half-sent requests, {after:.0f} MB once they and 500 "
        "abandoned handshakes are gone"
    )
    assert after - before < 10
    assert min(_get_ms(url, ctx) for _ in range(5)) < 100


SHORT_TIMEOUTS_SERVER = """
import asyncio, sys
from mockkube.apiserver.http.serving import Timeouts
from mockkube.server.server import Server, serve_forever
server = Server(port=0, tls=True, cert_dir=sys.argv[1], kubeconfig_path=sys.argv[1] + "/kubeconfig",
                timeouts=Timeouts(idle=float(sys.argv[2]), header=float(sys.argv[3]), tls_handshake=float(sys.argv[3])))
asyncio.run(serve_forever(server))
"""


def test_connections_clients_leave_open_are_closed_by_the_timeouts_and_give_their_memory_back(tmp_path):
    """200 half-sent requests, 200 idle keep-alive connections and 200 connections that never
    start their TLS handshake, none closed by the client: the server closes each after its
    timeout (shortened here: headers and handshake 2 s, idle 4 s) and the memory returns."""
    idle, header = 4.0, 2.0
    p = subprocess.Popen(
        [sys.executable, "-c", SHORT_TIMEOUTS_SERVER, str(tmp_path), str(idle), str(header)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = p.stdout.readline()
        assert line.startswith("mockkube ready at https://"), line
        url = line.split()[-1]
        port = int(url.rsplit(":", 1)[1])
        ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        ctx.check_hostname = False

        def open_all(n: int) -> list[socket.socket]:
            socks: list[socket.socket] = []
            for _ in range(n):
                half = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
                half.sendall(b"GET /api/v1/namesp")
                keep = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
                keep.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
                assert keep.recv(65536).startswith(b"HTTP/1.1 200")
                socks += [half, keep, socket.create_connection(("127.0.0.1", port))]  # the last: no ClientHello
            return socks

        def closed_by_server(socks: list[socket.socket], within: float) -> float:
            t0 = time.monotonic()
            for s in socks:
                s.settimeout(max(0.1, within - (time.monotonic() - t0)))
                try:
                    while s.recv(65536):
                        pass
                except (ssl.SSLError, ConnectionResetError):
                    pass  # closed mid-record: closed all the same
                except TimeoutError:
                    raise AssertionError(f"a connection was still open after {within} s") from None
            return time.monotonic() - t0

        for s in open_all(10):  # what the first use of these paths allocates is no leak
            s.close()
        _settled_rss(p.pid, below=0, within=1.5)
        before = _rss_mb(p.pid)
        socks = open_all(200)
        holding = _rss_mb(p.pid)
        took = closed_by_server(socks, within=idle + 6)
        for s in socks:
            s.close()
        after = _settled_rss(p.pid, below=before + 10, within=60)
        ms = min(_get_ms(url, ctx) for _ in range(5))
        print(
            f"RSS {before:.0f} MB, {holding:.0f} MB holding 600 connections, {after:.0f} MB after the server "
            f"closed them all ({took:.1f} s); GET {ms:.1f} ms"
        )
        assert after - before < 10
        assert ms < 100
    finally:
        p.terminate()
        p.wait(10)
