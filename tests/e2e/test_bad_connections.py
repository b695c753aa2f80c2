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
    _settled_rss(p.pid, below=0, within=1.5)
    before = _rss_mb(p.pid)
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    held = []
    for _ in range(200):  # a TLS connection each, holding half a request line
        s = client.wrap_socket(socket.create_connection(("127.0.0.1", port)))
        s.sendall(b"GET /api/v1/namesp")
        held.append(s)
    assert _get_ms(url, ctx) < 1000
    holding = _rss_mb(p.pid)
    for s in held:
        s.close()
    for _ in range(500):  # handshakes abandoned after the ClientHello
        raw = socket.create_connection(("127.0.0.1", port))
        raw.setblocking(False)
        s = client.wrap_socket(raw, do_handshake_on_connect=False)
        try:
            s.do_handshake()
        except ssl.SSLWantReadError:
            pass
        raw.close()
    after = _settled_rss(p.pid, below=before + 10, within=60)
    print(
        f"RSS {before:.0f} MB, {holding:.0f} MB holding 200 half-sent requests, {after:.0f} MB once they and 500 "
        "abandoned handshakes are gone"
    )
    assert after - before < 10
    assert min(_get_ms(url, ctx) for _ in range(5)) < 100
