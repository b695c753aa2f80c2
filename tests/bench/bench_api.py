"""API server benchmark: prints figures, not pass/fail.

    .venv/bin/python tests/bench/bench_api.py [--requests 3000] [--concurrency 32]

Measures, against a real ``mockkube serve`` subprocess:
- time from process start to ``/readyz`` 200, interleaved with the time to import aiohttp and
  SQLAlchemy alone (target: within x1.3 of that floor);
- GET-by-name, LIST of 1,000 pods and CREATE throughput with 32 concurrent clients,
  each also as a ratio against a trivial aiohttp handler (JSON of a similar size, served
  by a subprocess of the same Python) measured in the same run (target: GET >= 40%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp

TRIVIAL = r"""
import sys
from aiohttp import web
body = open(sys.argv[1], "rb").read()
async def h(request):
    return web.Response(body=body, content_type="application/json")
app = web.Application()
app.router.add_get("/{tail:.*}", h)
app.router.add_post("/{tail:.*}", h)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), print=lambda *a: print("ready", flush=True),
            access_log=None)
"""


def free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


async def wait_ready(url: str, deadline: float) -> None:
    async with aiohttp.ClientSession() as s:
        while time.perf_counter() < deadline:
            try:
                async with s.get(url + "/readyz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.005)
    raise RuntimeError("server did not become ready")


EMPTY_PROFILE = os.path.join(tempfile.mkdtemp(prefix="bench-api-"), "empty.yaml")
with open(EMPTY_PROFILE, "w") as _f:
    _f.write("nodes: []\ndeviceClasses: false\n")


async def start_mockkube(*extra: str) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    await wait_ready(url, t0 + 30)
    return p, url, time.perf_counter() - t0


async def hammer(method: str, urls, n: int, concurrency: int, body_fn=None) -> float:
    """Requests per second for ``n`` requests over ``concurrency`` connections."""
    conn = aiohttp.TCPConnector(limit=concurrency)
    counter = iter(range(n))
    async with aiohttp.ClientSession(connector=conn) as s:

        async def worker():
            for i in counter:
                url = urls(i)
                data = body_fn(i) if body_fn else None
                async with s.request(method, url, data=data, headers={"Content-Type": "application/json"}) as r:
                    await r.read()
                    if r.status >= 300:
                        raise RuntimeError(f"{method} {url}: {r.status}")

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - t0)


def pod(i: int) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{i}", "labels": {"app": "x"}},
            "spec": {
                "schedulerName": "bench-unscheduled",
                "containers": [{"name": "c", "image": "busybox:1.36", "resources": {"requests": {"cpu": "100m"}}}],
            },
        }
    ).encode()


async def run(args) -> None:
    # an installed package has its bytecode compiled; do the same for this checkout so the
    # figure is not dominated by compiling mockkube's sources (PYTHONDONTWRITEBYTECODE may be set)
    import compileall

    import mockkube

    compileall.compile_dir(os.path.dirname(mockkube.__file__), quiet=1)
    # the import floor, interleaved with the starts: a server cannot be ready before Python has
    # imported its HTTP server and database layer (target: start-up within x1.3 of it)
    floor: list[float] = []
    starts: dict[str, list[float]] = {"demo cluster (default)": [], "empty profile": []}
    for _ in range(args.startups):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import aiohttp, sqlalchemy"], check=True)
        floor.append(time.perf_counter() - t0)
        for label, extra in (("demo cluster (default)", ()), ("empty profile", ("--cluster", EMPTY_PROFILE))):
            p, url, dt = await start_mockkube(*extra)
            starts[label].append(dt)
            p.terminate()
            p.wait()
    f = statistics.median(floor)
    print(f"import aiohttp and sqlalchemy (the floor): median {f:.3f}s over {len(floor)} runs")
    for label, v in starts.items():
        m = statistics.median(v)
        print(
            f"startup to /readyz, {label}: best {min(v):.3f}s, median {m:.3f}s = x{m / f:.2f} of the floor "
            f"(target x1.3; load average {os.getloadavg()[0]:.1f})"
        )

    # the API server alone: no nodes, and pods for a scheduler nobody runs, so nothing else works
    p, url, _ = await start_mockkube("--cluster", EMPTY_PROFILE)
    base = url + "/api/v1/namespaces/default/pods"
    try:
        create = await hammer("POST", lambda i: base, args.requests, args.concurrency, pod)
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "/pod-1") as r:
                one = await r.read()
            async with s.get(base) as r:
                many = await r.read()
            n_items = len(json.loads(many)["items"])
        get = await hammer("GET", lambda i: f"{base}/pod-{i % args.requests}", args.requests, args.concurrency)
        lst_n = max(20, args.requests // 50)
        lst = await hammer("GET", lambda i: base, lst_n, min(args.concurrency, 8))
    finally:
        p.terminate()
        p.wait()

    results = {}
    with tempfile.TemporaryDirectory() as d:
        for label, payload in (("get", one), ("list", many), ("create", one)):
            f = os.path.join(d, label + ".json")
            with open(f, "wb") as fh:
                fh.write(payload)
            port = free_port()
            t = subprocess.Popen([sys.executable, "-c", TRIVIAL, f, str(port)], stdout=subprocess.PIPE, text=True)
            t.stdout.readline()
            turl = f"http://127.0.0.1:{port}/x"
            try:
                if label == "create":
                    results[label] = await hammer("POST", lambda i: turl, args.requests, args.concurrency, pod)
                elif label == "get":
                    results[label] = await hammer("GET", lambda i: turl, args.requests, args.concurrency)
                else:
                    results[label] = await hammer("GET", lambda i: turl, lst_n, min(args.concurrency, 8))
            finally:
                t.terminate()
                t.wait()
    print(f"list size: {n_items} pods, {len(many) / 1024:.0f} KiB per LIST response")
    for label, ours in (("GET by name", get), ("LIST all pods", lst), ("CREATE pod", create)):
        key = {"GET by name": "get", "LIST all pods": "list", "CREATE pod": "create"}[label]
        base_rps = results[key]
        print(f"{label:14s}: {ours:8.0f} req/s   trivial aiohttp: {base_rps:8.0f} req/s   ratio {ours / base_rps:.2f}")
    print("target: GET ratio >= 0.40")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000, help="pods created (and GETs made)")
    ap.add_argument("--startups", type=int, default=7, help="interleaved start-up runs")
    ap.add_argument("--concurrency", type=int, default=32)
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
