"""Cost of simulated nodes: time for a 1,000-node profile (8 GPUs each) to come up,
memory per node, and CPU per idle node while every lease renews.

Run: ``.venv/bin/python tests/bench/bench_nodes.py [nodes] [idle-seconds]`` or
``pytest tests/bench/bench_nodes.py -m bench -s``.
"""

from __future__ import annotations

import asyncio
import gc
import resource
import sys
import time

import pytest

from mockkube.config.profile import load
from mockkube.kubelet.cluster import ClusterRuntime
from mockkube.testing.cluster import running_server


def _profile(n: int) -> dict:
    return {
        "nodes": [
            {
                "name": "gpu",
                "count": n,
                "capacity": {"cpu": "64", "memory": "512Gi"},
                "drivers": {"gpu.example.com": {"count": 8}},
            }
        ]
    }


async def measure(n: int = 1000, idle: float = 12.0) -> dict:
    async with running_server() as server:
        gc.collect()
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0, c0 = time.perf_counter(), time.process_time()
        rt = ClusterRuntime(server)
        await rt.start(load(_profile(n)))
        up = time.perf_counter() - t0
        up_cpu = time.process_time() - c0
        gc.collect()
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        leases = rt.client.rt("leases", "coordination.k8s.io")
        before = {lz["metadata"]["name"]: lz["spec"]["renewTime"] for lz in rt.client.list(leases, "kube-node-lease")}
        c1, w1 = time.process_time(), time.perf_counter()
        await asyncio.sleep(idle)  # a benchmark observes time passing; nothing waits on it
        cpu = time.process_time() - c1
        wall = time.perf_counter() - w1
        after = {lz["metadata"]["name"]: lz["spec"]["renewTime"] for lz in rt.client.list(leases, "kube-node-lease")}
        renewed = sum(1 for k, v in after.items() if before.get(k) != v)
        tasks = len(asyncio.all_tasks())
        await rt.stop()
    return {
        "nodes": n,
        "startup_s": up,
        "startup_cpu_s": up_cpu,
        "rss_per_node_kib": (rss1 - rss0) / n,
        "rss_growth_mib": (rss1 - rss0) / 1024,
        "idle_cpu_pct_total": 100 * cpu / wall,
        "idle_cpu_us_per_node_per_s": 1e6 * cpu / wall / n,
        "leases_renewed": renewed,
        "tasks": tasks,
    }


def report(r: dict) -> str:
    return (
        f"{r['nodes']} nodes up in {r['startup_s']:.2f}s ({r['startup_cpu_s']:.2f}s CPU); "
        f"RSS +{r['rss_growth_mib']:.0f} MiB = {r['rss_per_node_kib']:.0f} KiB/node (Node, Lease, slices, "
        f"cache, event log included); idle: {r['idle_cpu_pct_total']:.1f}% of one core "
        f"= {r['idle_cpu_us_per_node_per_s']:.1f} us CPU per node per second; "
        f"{r['leases_renewed']} leases renewed in the window; {r['tasks']} asyncio tasks"
    )


@pytest.mark.bench
async def test_bench_nodes():
    r = await measure(1000, 11.0)
    print("\n" + report(r))
    assert r["leases_renewed"] == 1000  # every lease renews within one interval
    assert r["tasks"] < 50  # one queue for all nodes, not a task per node


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    idle = float(sys.argv[2]) if len(sys.argv) > 2 else 12.0
    print(report(asyncio.run(measure(n, idle))))
