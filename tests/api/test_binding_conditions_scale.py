"""KEP-5007 at scale: 200 pods waiting in PreBind for binding conditions do not slow
down the scheduling of other pods (the wait is not in the scheduling loop)."""

from __future__ import annotations

import time

from mockkube.client.client import Client
from mockkube.scheduler.scheduler import Scheduler
from mockkube.testing.clock import FakeClock, resync_components
from mockkube.testing.cluster import running_server
from mockkube.testing.waiting import eventually

WAITING = 200
PLAIN = 100

PROFILE = {
    "nodes": [
        {
            "name": "fpga-node",
            "labels": {"example.com/fabric": "fabric-a"},
            "capacity": {"pods": "1000"},
            "drivers": {"fpga.example.com": {}},
        },
        {"name": "plain-node", "count": 2, "capacity": {"pods": "1000"}},
    ],
    "fabric": [
        {"pool": f"fabric-{p}", "devices": WAITING // 2, "nodeSelector": {"example.com/fabric": "fabric-a"}}
        for p in "ab"
    ],
    "drivers": {"fpga.example.com": {"attachDelay": "1m"}},
}


def _plain(c: Client, prefix: str) -> list[str]:
    names = [f"{prefix}-{i}" for i in range(PLAIN)]
    for n in names:
        c.create(
            c.rt("pods"),
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": n, "namespace": "default"},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": "plain-node-0"},
                    "containers": [{"name": "c", "image": "x"}],
                },
            },
        )
    return names


def _all_bound(c: Client, names: list[str]) -> bool:
    return all((c.get(c.rt("pods"), "default", n) or {}).get("spec", {}).get("nodeName") for n in names)


async def _timed(c: Client, prefix: str) -> float:
    t0 = time.monotonic()
    names = _plain(c, prefix)
    await eventually(lambda: _all_bound(c, names), timeout=60, what=f"{prefix} pods bound")
    return time.monotonic() - t0


async def test_200_waiting_pods_do_not_hold_up_other_pods():
    clock = FakeClock()
    async with running_server(components=True, clock=clock, cluster=PROFILE) as server:
        c = Client(server.resources, "test")
        sched = next(x for x in server.components if isinstance(x, Scheduler))
        before = await _timed(c, "before")
        claims_rt = c.rt("resourceclaims", "resource.k8s.io")
        for i in range(WAITING):
            name = f"accel-{i}"
            c.create(
                claims_rt,
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {
                        "devices": {"requests": [{"name": "fpga", "exactly": {"deviceClassName": "fpga.example.com"}}]}
                    },
                },
            )
            c.create(
                c.rt("pods"),
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {
                        "resourceClaims": [{"name": "fpga", "resourceClaimName": name}],
                        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "fpga"}]}}],
                    },
                },
            )
        await eventually(lambda: len(sched.binding) == WAITING, timeout=120, what="all FPGA pods waiting")
        during = await _timed(c, "during")
        assert len(sched.binding) == WAITING  # still all waiting: nothing was attached yet
        print(f"\n{PLAIN} plain pods: {before:.3f}s alone, {during:.3f}s with {WAITING} pods waiting in PreBind")
        assert during < 3 * before + 1.0
        clock.advance(60)  # the fabric controller's attach delay passes
        await server.on_cluster(resync_components, server)
        accel = [f"accel-{i}" for i in range(WAITING)]
        await eventually(lambda: _all_bound(c, accel), timeout=120, what="FPGA pods bound after attach")
        assert len(sched.binding) == 0
