"""Connection timeouts as kube-apiserver's (Go http.Server IdleTimeout 90 s, ReadHeaderTimeout
32 s, the TLS handshake 32 s), shortened for the test: half-sent request lines and silent
connections are closed after the header timeout, idle keep-alive connections after the idle
timeout, abandoned TLS handshakes after the handshake timeout; a slow body and a long watch
are not cut."""

from __future__ import annotations

import asyncio
import json
import ssl
import time

import pytest

from mockkube.apiserver.http.serving import Timeouts
from mockkube.testing.cluster import running_server

HEADER, IDLE = 0.5, 2.0
SLACK = 0.7  # the sweep's period and a loaded machine
TIMEOUTS = Timeouts(idle=IDLE, header=HEADER, tls_handshake=HEADER)


@pytest.fixture
async def server():
    async with running_server(timeouts=TIMEOUTS) as s:
        yield s


async def _closed_after(reader: asyncio.StreamReader, within: float) -> float:
    """Seconds until the server closes the connection (reading and dropping what it sends)."""
    t0 = time.monotonic()
    while await asyncio.wait_for(reader.read(65536), within):
        pass
    return time.monotonic() - t0


async def _connect(server):
    host, port = server.url.split("//")[1].rsplit(":", 1)
    return await asyncio.open_connection(host, int(port))


async def test_half_sent_request_lines_and_silent_connections_are_closed_after_the_header_timeout(server):
    silent_r, silent_w = await _connect(server)
    half_r, half_w = await _connect(server)
    half_w.write(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")  # no blank line: headers never end
    await half_w.drain()
    took = await asyncio.gather(_closed_after(silent_r, 5), _closed_after(half_r, 5))
    assert all(HEADER * 0.9 <= t < HEADER + SLACK for t in took), took
    # after a complete request, the next one's headers get the timeout from their first byte
    r, w = await _connect(server)
    w.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await r.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    await r.readexactly(2)  # "ok"
    await asyncio.sleep(HEADER * 2)  # idle (not yet the idle timeout): still open
    w.write(b"GET /readyz HTTP/1.1\r\n")
    await w.drain()
    assert HEADER * 0.9 <= await _closed_after(r, 5) < HEADER + SLACK
    for writer in (silent_w, half_w, w):
        writer.close()


async def test_idle_keep_alive_connections_are_closed_after_the_idle_timeout(server):
    r, w = await _connect(server)
    w.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
    head = await r.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" not in head.lower()
    await r.readexactly(2)
    t0 = time.monotonic()
    assert await r.read(1) == b""  # the server closes it
    assert IDLE * 0.9 <= time.monotonic() - t0 < IDLE + SLACK


async def test_a_slow_body_and_a_long_watch_are_not_cut(server):
    r, w = await _connect(server)
    body = json.dumps({"metadata": {"name": "slow"}, "data": {"k": "v"}}).encode()
    w.write(
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    for i in range(0, len(body), 8):  # the body takes three header timeouts to arrive
        w.write(body[i : i + 8])
        await w.drain()
        await asyncio.sleep(HEADER * 3 / (len(body) / 8))
    assert (await r.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 201")
    w.close()
    r, w = await _connect(server)
    w.write(
        b"GET /api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert (await r.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    t0 = time.monotonic()
    while await asyncio.wait_for(r.read(65536), 10):
        pass
    assert 1.5 <= time.monotonic() - t0 < 2 + SLACK  # the watch ran its timeoutSeconds, past the header timeout
    w.close()


async def test_abandoned_tls_handshakes_are_closed_after_the_handshake_timeout(tmp_path):
    async with running_server(timeouts=TIMEOUTS, tls=True, cert_dir=str(tmp_path)) as s:
        host, port = s.url.split("//")[1].rsplit(":", 1)
        r, w = await asyncio.open_connection(host, int(port))  # no ClientHello ever
        assert HEADER * 0.9 <= await _closed_after(r, 5) < HEADER + SLACK
        w.close()
        ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        ctx.check_hostname = False
        r, w = await asyncio.open_connection(host, int(port), ssl=ctx)  # the handshake done: headers' turn
        assert HEADER * 0.9 <= await _closed_after(r, 5) < HEADER + SLACK
        w.close()


def test_kube_apiservers_durations_are_the_defaults():
    assert Timeouts() == Timeouts(idle=90.0, header=32.0, tls_handshake=32.0)
