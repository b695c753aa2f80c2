"""kwok's shapes on the default `mockkube serve` over HTTP, every component running:

  (a) N nodes (default 5,000) Ready: the time from the server's start to the last node Ready;
  (b) P plain pods (default 10,000; no claims, one container without a command, so it stays
      simulated) created by 16 concurrent HTTP clients, Running: first create to last
      Running (seen through a watch);

and the memory that (b) costs: the resident size of the API server process and of the
scheduler process before the pods and once they all run and the server has settled, each
after a full collection (the server runs with ``MOCKKUBE_MEMDEBUG``'s figures-only mode,
mockkube/server/memdebug.py: SIGUSR2 collects and records the size), and **KB per running
pod** per process = (after - before) / pods; beside it the live memory (pymalloc's blocks and
glibc's heap in use: the resident size less what the allocators hold free). kwok's own CI
bound is 60 s for each. ``--memdebug DIR --trace N`` keeps the figures and tracemalloc
snapshots (N frames; several-fold slower) for a breakdown by allocation site.

    .venv/bin/python tests/bench/bench_kwok.py                       # 5,000 nodes, 10,000 pods
    .venv/bin/python tests/bench/bench_kwok.py --nodes 1000 --pods 2000
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import aiohttp
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.bench.bench_e2e import CLIENTS, cpu_seconds, create_all  # noqa: E402
from tests.procs import child_processes  # noqa: E402

KWOK_BOUND = 60.0  # seconds, kwok's CI for both shapes


def profile(nodes: int) -> dict:
    """Plain nodes, as kwok's: capacity and no devices."""
    return {
        "apiVersion": "mockkube.io/v1alpha1",
        "kind": "ClusterProfile",
        "name": "kwok",
        "nodes": [{"name": "kwok-node", "count": nodes, "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"}}],
    }


def pod(i: int) -> dict:
    return {
        "metadata": {"name": f"pod-{i}"},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]},
    }


def children(pid: int) -> dict[str, int]:
    """The server's child processes by role (the scheduler process)."""
    return {"scheduler": k for k, argv in child_processes(pid).items() if "scheduler" in argv}


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def collected_rss(memdir: str, procs: dict[str, int]) -> dict[str, int]:
    """Each process's resident size after a full collection: SIGUSR2 makes memdebug collect and
    write its figures (``<name>-snap-N.json``)."""
    before = set(glob.glob(os.path.join(memdir, "*.json")))
    for p in procs.values():
        os.kill(p, signal.SIGUSR2)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        new = set(glob.glob(os.path.join(memdir, "*.json"))) - before
        if len(new) >= len(procs):
            break
        await asyncio.sleep(0.2)
    else:
        raise RuntimeError("memdebug figures not written")
    await asyncio.sleep(0.5)  # the file is written in one go after the collection; let it close
    out = {}
    for path in new:
        name = "scheduler" if os.path.basename(path).startswith("scheduler") else "server"
        with open(path) as f:
            got = json.load(f)
        fig = got.get("after_collect", got)
        out[name] = fig["rss"]
        # what is alive: pymalloc's blocks in use and glibc's heap in use (the rest of the
        # resident size is the allocators' free memory, the interpreter's code, the stacks)
        out[name + " live"] = fig.get("pymalloc", {}).get("bytes_in_allocated_blocks", 0) + fig.get("malloc", {}).get(
            "in_use", 0
        )
    return out


async def settle(pid: int, quiet: float = 0.1) -> None:
    """Until the server and its children are nearly idle (under ``quiet`` of a core over 2 s):
    the kubelets' status writes and the events of the burst are done."""
    deadline = time.monotonic() + 120
    last = sum(cpu_seconds(pid).values())
    while time.monotonic() < deadline:
        await asyncio.sleep(2)
        now = sum(cpu_seconds(pid).values())
        if now - last < quiet * 2:
            return
        last = now


async def count_ready(s: aiohttp.ClientSession, url: str) -> int:
    async with s.get(f"{url}/api/v1/nodes") as r:
        items = (await r.json())["items"]
    return sum(
        1
        for n in items
        if any(c["type"] == "Ready" and c["status"] == "True" for c in (n.get("status") or {}).get("conditions") or ())
    )


async def watch_running(s: aiohttp.ClientSession, url: str, want: int, rv: str, done: asyncio.Future) -> None:
    running: set[str] = set()
    async with s.get(
        f"{url}/api/v1/namespaces/kwok/pods",
        params={"watch": "true", "resourceVersion": rv},
        timeout=aiohttp.ClientTimeout(total=None),
    ) as r:
        async for line in r.content:
            obj = json.loads(line)["object"]
            if (obj.get("status") or {}).get("phase") == "Running":
                running.add(obj["metadata"]["name"])
                if len(running) >= want:
                    done.set_result(time.perf_counter())
                    return


async def measure(url: str, pid: int, started: float, nodes: int, pods: int, memdir: str) -> dict:
    conn = aiohttp.TCPConnector(limit=CLIENTS + 4)
    out: dict = {}
    async with aiohttp.ClientSession(connector=conn) as s:
        deadline = time.monotonic() + 600
        while await count_ready(s, url) < nodes:
            if time.monotonic() > deadline:
                raise RuntimeError("nodes not Ready")
            await asyncio.sleep(0.2)
        out["ready_s"] = time.perf_counter() - started
        procs = {"server": pid, **children(pid)}
        async with s.post(f"{url}/api/v1/namespaces", json={"metadata": {"name": "kwok"}}) as r:
            assert r.status == 201, await r.text()
        await settle(pid)
        out["rss_before"] = await collected_rss(memdir, procs)
        async with s.get(f"{url}/api/v1/namespaces/kwok/pods") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        done: asyncio.Future = asyncio.get_running_loop().create_future()
        watcher = asyncio.create_task(watch_running(s, url, pods, rv, done))
        cpu0 = cpu_seconds(pid)
        first = await create_all(s, url, "/api/v1/namespaces/kwok/pods", [pod(i) for i in range(pods)])
        last = await asyncio.wait_for(done, 900)
        cpu1 = cpu_seconds(pid)
        watcher.cancel()
        out["running_s"] = last - first
        out["cpu_ms_per_pod"] = {k: (v - cpu0.get(k, 0.0)) * 1000 / pods for k, v in cpu1.items()}
        await settle(pid)
        out["rss_after"] = await collected_rss(memdir, procs)
        out["rss_settled_nogc"] = {k: rss(p) for k, p in procs.items()}
    return out


def run(nodes: int, pods: int, extra: list[str], memdir: str | None = None, trace: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "profile.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(profile(nodes), f)
        memdir = os.path.abspath(memdir) if memdir else os.path.join(d, "mem")
        env = {
            **os.environ,
            "MOCKKUBE_MEMDEBUG": memdir,
            "MOCKKUBE_MEMDEBUG_TRACE": str(trace),
            "MOCKKUBE_MEMDEBUG_COLLECT": "1",
        }
        started = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--cluster", path, *extra],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        try:
            line = p.stdout.readline()
            if not line.startswith("mockkube ready at "):
                raise RuntimeError(f"server did not start: {line}")
            return asyncio.run(measure(line.split()[-1], p.pid, started, nodes, pods, memdir))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(60)


def report(nodes: int, pods: int, r: dict) -> str:
    mb = 1 << 20
    per = {k: (r["rss_after"][k] - r["rss_before"][k]) / 1024 / pods for k in r["rss_after"]}
    return (
        f"{nodes} nodes Ready in {r['ready_s']:.1f}s; {pods} pods Running in {r['running_s']:.1f}s "
        f"({pods / r['running_s']:.0f} pods/s; kwok's bound {KWOK_BOUND:.0f}s); RSS after a collection "
        + ", ".join(
            f"{k} {r['rss_before'][k] / mb:.0f} -> {r['rss_after'][k] / mb:.0f} MB = {per[k]:.1f} KB/pod"
            for k in sorted(per)
        )
        + f" (total {sum(v for k, v in per.items() if not k.endswith('live')):.1f} KB/pod); CPU per pod "
        + ", ".join(f"{k} {v:.1f} ms" for k, v in sorted(r["cpu_ms_per_pod"].items()))
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--server-arg", action="append", default=[], help="extra `mockkube serve` argument")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument(
        "--memdebug",
        metavar="DIR",
        help="keep the memdebug figures in DIR; with --trace N, tracemalloc snapshots too (slow: not for timings)",
    )
    ap.add_argument("--trace", type=int, default=0, metavar="N", help="tracemalloc frames (with --memdebug)")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "mockkube")], check=False)
    r = run(args.nodes, args.pods, args.server_arg, args.memdebug, args.trace)
    print(report(args.nodes, args.pods, r), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "pods": args.pods, **r}, f)


if __name__ == "__main__":
    main()
