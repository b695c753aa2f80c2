"""Scheduling throughput on upstream scheduler_perf's SchedulingWithResourceClaimTemplate
shape: nodes of 4 CPU / 32Gi / 110 pods, one ResourceSlice of 10 devices per node, a
DeviceClass with one CEL selector, every pod takes one device through a claim template.

Measures pods/s from pod creation to bound, in-process, with the ResourceClaim controller
and every API write (pod create, claim create, pod status, claim finalizer and status,
binding, Scheduled event) included:
  burst:  all pods created at once;
  steady: pods created as earlier ones bind, keeping a small window in flight.

    .venv/bin/python tests/bench/bench_scheduler.py                # 500 and 5000 nodes
    .venv/bin/python tests/bench/bench_scheduler.py --nodes 500 --pods 2500
    .venv/bin/python tests/bench/bench_scheduler.py --churn         # queueing hints at work

``--churn``: 500 nodes with 200 pods that cannot be scheduled (100 want a node label no
node has, 100 more cpu than a node offers) while 1000 plain pods (no affinity, no
spread) are scheduled, half of them deleted again, and every node relabelled with a
label nobody selects. Reports plain pods/s and the scheduling attempts each
unschedulable pod cost: with queueing hints only events their rejecting plugin cares
about retry them.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mockkube.client.client import Client  # noqa: E402
from mockkube.controllers.resourceclaim import ResourceClaimController  # noqa: E402
from mockkube.scheduler.scheduler import Scheduler  # noqa: E402
from mockkube.testing.cluster import running_server  # noqa: E402

DRIVER = "test-driver.cdi.k8s.io"
G = "resource.k8s.io"


def setup(c: Client, nodes: int) -> None:
    for i in range(nodes):
        name = f"scheduler-perf-dra-{i}"
        alloc = {"cpu": "4", "memory": "32Gi", "pods": "110"}
        c.create(
            c.rt("nodes"),
            {
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": alloc, "allocatable": alloc},
            },
        )
        c.create(
            c.rt("resourceslices", G),
            {
                "metadata": {"name": f"{name}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": f"gpu-{d}", "attributes": {"model": {"string": "a100"}}} for d in range(10)],
                },
            },
        )
    c.create(
        c.rt("deviceclasses", G),
        {
            "metadata": {"name": "test-class"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    )
    c.create(
        c.rt("resourceclaimtemplates", G),
        {
            "metadata": {"name": "test-claim-template", "namespace": "default"},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": "test-class"}}]}}
            },
        },
    )


def pod(c: Client, name: str) -> None:
    c.create(
        c.rt("pods"),
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "containers": [
                    {
                        "name": "pause",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "resource"}]},
                    }
                ],
                "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}],
            },
        },
    )


async def wait_bound(sched: Scheduler, target: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while sched.scheduled < target:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {sched.scheduled}/{target} pods bound")
        await asyncio.sleep(0.005)


async def run(nodes: int, pods: int, window: int) -> dict:
    async with running_server() as server:
        c = Client(server.resources, "bench")
        t0 = time.perf_counter()
        setup(c, nodes)
        t_setup = time.perf_counter() - t0
        ctrl = ResourceClaimController(server)
        sched = Scheduler(server)
        await ctrl.start()
        await sched.start()
        try:
            t0 = time.perf_counter()
            for i in range(pods):
                pod(c, f"burst-{i}")
            t_created = time.perf_counter() - t0
            await wait_bound(sched, pods)
            burst = time.perf_counter() - t0
            t0 = time.perf_counter()
            created = 0
            while created < pods:
                while created < pods and created - (sched.scheduled - pods) < window:
                    pod(c, f"steady-{created}")
                    created += 1
                await asyncio.sleep(0.0005)  # let the components run; do not spin
            await wait_bound(sched, 2 * pods)
            steady = time.perf_counter() - t0
        finally:
            await sched.stop()
            await ctrl.stop()
        return {
            "nodes": nodes,
            "pods": pods,
            "setup_s": t_setup,
            "create_s": t_created,
            "burst_pps": pods / burst,
            "steady_pps": pods / steady,
        }


def plain_pod(c: Client, name: str, **spec) -> None:
    body = {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "10m"}}}
            ],
            **spec,
        },
    }
    c.create(c.rt("pods"), body)


async def churn(nodes: int, plain: int) -> dict:
    async with running_server() as server:
        c = Client(server.resources, "bench")
        for i in range(nodes):
            alloc = {"cpu": "4", "memory": "32Gi", "pods": "110"}
            name = f"churn-{i}"
            c.create(
                c.rt("nodes"),
                {
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                    "status": {"capacity": alloc, "allocatable": alloc},
                },
            )
        sched = Scheduler(server)
        await sched.start()
        try:
            for i in range(100):
                plain_pod(c, f"picky-{i}", nodeSelector={"disk": "none"})
            for i in range(100):
                body = {
                    "metadata": {"name": f"huge-{i}", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "64"}}}]},
                }
                c.create(c.rt("pods"), body)
            deadline = time.monotonic() + 120
            while len(sched.queue.unschedulable) < 200:
                if time.monotonic() > deadline:
                    raise RuntimeError("unschedulable pods did not settle")
                await asyncio.sleep(0.005)
            stuck = [k for k in sched.queue.entries]
            before = {k: sched.queue.entries[k].attempts for k in stuck}
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(plain):
                plain_pod(c, f"plain-{i}")
            await wait_bound(sched, plain)
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            for i in range(0, plain, 2):
                c.delete(c.rt("pods"), "default", f"plain-{i}", {"gracePeriodSeconds": 0})
            for i in range(nodes):
                c.patch(c.rt("nodes"), "", f"churn-{i}", {"metadata": {"labels": {"churn": "yes"}}}, "merge")
            # let the queue take every event and run the retries it decided on
            for _ in range(200):
                await asyncio.sleep(0.01)
                if sched.idle() and not sched.queue._in_backoff:
                    break
            retries = sum(sched.queue.entries[k].attempts - before[k] for k in stuck if k in sched.queue.entries)
        finally:
            await sched.stop()
        return {
            "plain_pps": plain / elapsed,
            "cpu_ms_per_plain_pod": 1000 * cpu / plain,
            "attempts_per_stuck_pod": retries / len(stuck),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="500,5000", help="comma-separated node counts (default 500,5000)")
    ap.add_argument("--pods", type=int, default=1500, help="pods per phase (burst, then steady)")
    ap.add_argument("--window", type=int, default=20, help="pods in flight in the steady phase")
    ap.add_argument("--churn", action="store_true", help="the churn scenario instead (see above)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.churn:
        r = asyncio.run(churn(500, 1000))
        print(
            f"churn: 500 nodes, 1000 plain pods {r['plain_pps']:.0f} pods/s "
            f"({r['cpu_ms_per_plain_pod']:.2f} ms CPU each, API writes included), "
            f"{r['attempts_per_stuck_pod']:.2f} extra attempts per unschedulable pod",
            flush=True,
        )
        return
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        pods = min(args.pods, n * 10 // 2)
        r = asyncio.run(run(n, pods, args.window))
        rows.append(r)
        print(
            f"{n:>6} nodes  {pods:>5} pods/phase  setup {r['setup_s']:.1f}s  "
            f"(burst creation alone {r['create_s']:.2f}s)  burst {r['burst_pps']:.0f} pods/s  "
            f"steady {r['steady_pps']:.0f} pods/s",
            flush=True,
        )
    if len(rows) > 1:
        base = rows[0]
        for r in rows[1:]:
            f = r["nodes"] / base["nodes"]
            print(
                f"x{f:g} nodes: burst x{r['burst_pps'] / base['burst_pps']:.2f}, "
                f"steady x{r['steady_pps'] / base['steady_pps']:.2f} throughput"
            )


if __name__ == "__main__":
    main()
