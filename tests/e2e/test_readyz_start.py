"""``/readyz`` during start-up: the post-start hooks (nodes, slices, device classes) gate it, as
kube-apiserver's ``poststarthook/...`` checks do, so a client that polls it from the first
moment never sees 200 over an empty cluster."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port: int, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_readyz_fails_until_the_cluster_exists():
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        not_ready: list[str] = []
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline and server.poll() is None, "never ready"
            try:
                status, body = _get(port, "/readyz?verbose")
            except OSError:  # not listening yet
                continue
            if status == 200:
                break
            not_ready.append(body)
        nodes = json.loads(_get(port, "/api/v1/nodes")[1])["items"]
        slices = json.loads(_get(port, "/apis/resource.k8s.io/v1/resourceslices")[1])["items"]
        classes = json.loads(_get(port, "/apis/resource.k8s.io/v1/deviceclasses")[1])["items"]
        assert nodes and slices and classes
        for body in not_ready:  # what a poll during start-up saw: upstream's form
            lines = body.splitlines()
            assert "[-]poststarthook/bootstrap-controller failed: reason withheld" in lines
            assert lines[-1] == "readyz check failed"
    finally:
        server.terminate()
        server.wait(10)
