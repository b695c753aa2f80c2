"""Micro-benchmark: per-node Filter cost of the DRA allocator.

500 nodes x 10 GPUs, one DeviceClass with a CEL selector, pods with one single-device
claim. Each "pod" runs allocate() on every node (Filter), then reserves the result on one
node (Reserve), as the scheduler does. Run: .venv/bin/python tests/bench/bench_allocator.py
"""

from __future__ import annotations

import time

from mockkube.dra.allocator import Allocator
from mockkube.dra.state import AllocatedState

NODES, DEVICES, PODS = 500, 10, 200
DRIVER = "gpu.example.com"


def cluster() -> tuple[list[dict], list[dict], list[dict]]:
    nodes = [{"metadata": {"name": f"node-{i}", "labels": {"zone": f"z{i % 3}"}}} for i in range(NODES)]
    slices = [
        {
            "metadata": {"name": f"node-{i}-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": f"node-{i}",
                "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{d}",
                        "attributes": {"model": {"string": "a100"}, "index": {"int": d}},
                        "capacity": {"memory": {"value": "80Gi"}},
                    }
                    for d in range(DEVICES)
                ],
            },
        }
        for i in range(NODES)
    ]
    classes = [
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "selectors": [
                    {
                        "cel": {
                            "expression": f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].model == "a100"'
                        }
                    }
                ]
            },
        }
    ]
    return nodes, slices, classes


def claim(i: int) -> dict:
    return {
        "metadata": {"name": f"c{i}", "namespace": "default", "uid": f"u{i}", "resourceVersion": "1"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
    }


def main() -> None:
    nodes, slices, classes = cluster()
    t0 = time.perf_counter()
    alloc = Allocator(slices, classes)
    build = time.perf_counter() - t0
    state = AllocatedState()
    # warm-up pass: builds node views and the per-node class/selector match cache
    t0 = time.perf_counter()
    for n in nodes:
        alloc.allocate([claim(-1)], n, state, "now")
    warm = time.perf_counter() - t0
    calls = 0
    t0 = time.perf_counter()
    for p in range(PODS):
        c = claim(p)
        chosen = None
        for n in nodes:
            out = alloc.allocate([c], n, state, "now")
            calls += 1
            if out.ok and chosen is None:
                chosen = out
        state.add(chosen.results[0])
    elapsed = time.perf_counter() - t0
    per_node = elapsed / calls
    print(f"build allocator: {build * 1e3:.1f} ms for {NODES} slices x {DEVICES} devices")
    print(f"first pass (cold caches): {warm / NODES * 1e6:.1f} us/node")
    print(
        f"Filter: {per_node * 1e6:.1f} us/node, {per_node * NODES * 1e3:.2f} ms/pod over {NODES} nodes, "
        f"~{1 / (per_node * NODES):.0f} pods/s for DRA Filter alone (single core)"
    )


if __name__ == "__main__":
    main()
