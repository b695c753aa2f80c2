"""What an idle cluster costs its kubelet shards: `mockkube serve --node-shards M` with N
nodes (bench_e2e.py's shape, 10 devices each), once every node is up, the CPU each process
spends per second over a quiet window (nothing but the nodes' Lease renewals and status
updates). A shard is sent every change of what it follows, so this is where following less
shows.

    .venv/bin/python tests/bench/bench_shard_idle.py --nodes 2000 --node-shards 2 --seconds 60

For a before/after, run the same script from a checkout of each version, interleaved (the
server comes from the checkout the script is in).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time

import aiohttp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.bench import bench_e2e  # noqa: E402


async def _ready(url: str, nodes: int) -> None:
    async with aiohttp.ClientSession() as s:
        await bench_e2e.wait_nodes_ready(s, url, nodes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--node-shards", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=15.0, help="seconds to wait after the nodes are up")
    args = ap.parse_args()
    bench_e2e.SIMULATED = True
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        p, url = bench_e2e.start_server(d, args.nodes, ["--node-shards", str(args.node_shards)])
        try:
            asyncio.run(_ready(url, args.nodes))
            up = time.monotonic() - t0
            time.sleep(args.settle)
            before, t = bench_e2e.cpu_seconds(p.pid), time.monotonic()
            load0 = os.getloadavg()[0]
            time.sleep(args.seconds)
            after, dt = bench_e2e.cpu_seconds(p.pid), time.monotonic() - t
            per_s = {k: (after[k] - before.get(k, 0.0)) / dt * 1000 for k in after}
            print(
                f"{args.nodes} nodes, --node-shards {args.node_shards}, up in {up:.0f} s, idle {dt:.0f} s "
                f"(load {load0:.1f} -> {os.getloadavg()[0]:.1f}): CPU ms per second: "
                + ", ".join(f"{k} {v:.0f}" for k, v in sorted(per_s.items())),
                flush=True,
            )
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(30)


if __name__ == "__main__":
    main()
