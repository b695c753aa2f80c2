"""Two `mockkube scheduler --leader-elect` processes beside `mockkube serve --scheduler none`:
one acts, the leader is killed (SIGKILL) in the middle of a burst of DRA pods, the other
takes the Lease over and schedules the rest, and an audit finds no device in two claims'
allocations and no pod bound twice (its nodeName never changes once set)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time

import aiohttp
import pytest
import yaml

from mockkube.testing.waiting import eventually

pytestmark = pytest.mark.e2e

G = "resource.k8s.io"
NODES, DEVICES, PODS = 8, 4, 32
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"


def _profile(path: str) -> None:
    with open(path, "w") as f:
        yaml.safe_dump(
            {
                "apiVersion": "mockkube.io/v1alpha1",
                "kind": "ClusterProfile",
                "name": "leader-election",
                "nodes": [
                    {
                        "name": "le",
                        "count": NODES,
                        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                        "drivers": {"gpu.example.com": {"count": DEVICES}},
                    }
                ],
            },
            f,
        )


def _scheduler(kubeconfig: str) -> tuple[subprocess.Popen, str]:
    """A leader-elected scheduler with short durations (upstream's 15 s, 10 s, 2 s scaled down; long
    enough that a loaded machine does not starve a leader out of its lease): (process, identity)."""
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkube",
            "scheduler",
            "--kubeconfig",
            kubeconfig,
            "--leader-elect",
            "--leader-elect-lease-duration",
            "4s",
            "--leader-elect-renew-deadline",
            "3s",
            "--leader-elect-retry-period",
            "500ms",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in p.stderr:
        if line.startswith("mockkube scheduler: leader election as "):
            threading.Thread(target=p.stderr.read, daemon=True).start()  # never a full pipe
            return p, line.split()[-1]
    raise RuntimeError("the scheduler did not start")


def _pod(i: int) -> dict:
    return {
        "metadata": {"name": f"p-{i}"},
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        },
    }


async def test_the_standby_scheduler_takes_over_mid_burst_without_double_allocation(tmp_path):
    _profile(str(tmp_path / "profile.yaml"))
    kubeconfig = str(tmp_path / "kubeconfig")
    server = subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", "--scheduler", "none"]
        + ["--cluster", str(tmp_path / "profile.yaml"), "--kubeconfig", kubeconfig],
        stdout=subprocess.PIPE,
        text=True,
    )
    procs: list[subprocess.Popen] = [server]
    try:
        line = server.stdout.readline()
        assert line.startswith("mockkube ready at "), line
        url = line.split()[-1]
        schedulers = dict(reversed(_scheduler(kubeconfig)) for _ in range(2))  # identity -> process
        procs += schedulers.values()
        async with aiohttp.ClientSession() as s:

            async def get(path: str) -> dict:
                async with s.get(url + path) as r:
                    return await r.json() if r.status == 200 else {}

            async def holder() -> str:
                return ((await get(LEASE)).get("spec") or {}).get("holderIdentity") or ""

            async def slices_published() -> bool:
                return len((await get(f"/apis/{G}/v1/resourceslices")).get("items") or []) >= NODES

            await _until(slices_published, 60)
            await _until(holder, 30)
            first = await holder()
            assert first in schedulers
            async with s.post(url + "/api/v1/namespaces", json={"metadata": {"name": "le"}}) as r:
                assert r.status == 201
            template = {
                "metadata": {"name": "one-gpu"},
                "spec": {
                    "spec": {
                        "devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}
                    }
                },
            }
            async with s.post(url + f"/apis/{G}/v1/namespaces/le/resourceclaimtemplates", json=template) as r:
                assert r.status == 201, await r.text()
            rv = (await get("/api/v1/namespaces/le/pods"))["metadata"]["resourceVersion"]
            nodes: dict[str, list[str]] = {}  # pod -> every nodeName its events carried

            async def watch() -> None:
                params = {"watch": "1", "resourceVersion": rv}
                async with s.get(url + "/api/v1/namespaces/le/pods", params=params) as r:
                    async for raw in r.content:
                        obj = json.loads(raw)["object"]
                        node = (obj.get("spec") or {}).get("nodeName")
                        seen = nodes.setdefault(obj["metadata"]["name"], [])
                        if node and (not seen or seen[-1] != node):
                            seen.append(node)

            watching = asyncio.create_task(watch())

            async def create(i: int) -> None:
                async with s.post(url + "/api/v1/namespaces/le/pods", json=_pod(i)) as r:
                    assert r.status == 201, await r.text()

            creating = asyncio.gather(*(create(i) for i in range(PODS)))
            await eventually(lambda: sum(1 for v in nodes.values() if v) >= 4, timeout=60)
            schedulers[first].send_signal(signal.SIGKILL)  # mid-burst: the rest waits for the standby
            killed = time.monotonic()
            bound_at_kill = sum(1 for v in nodes.values() if v)
            await creating
            await eventually(lambda: sum(1 for v in nodes.values() if v) >= PODS, timeout=90, what="every pod bound")
            took_over = time.monotonic() - killed
            second = await holder()
            assert second in schedulers and second != first
            lease = (await get(LEASE))["spec"]
            assert lease["leaseTransitions"] >= 1 and lease["leaseDurationSeconds"] == 4
            watching.cancel()
            # the audit: one node per pod for good, one claim per device
            assert all(len(v) == 1 for v in nodes.values()), {k: v for k, v in nodes.items() if len(v) != 1}
            claims = (await get(f"/apis/{G}/v1/namespaces/le/resourceclaims"))["items"]
            devices: dict[tuple, str] = {}
            for c in claims:
                for res in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []:
                    key = (res["driver"], res["pool"], res["device"])
                    assert key not in devices, f"{key} in {devices[key]} and {c['metadata']['name']}"
                    devices[key] = c["metadata"]["name"]
            assert len(devices) == PODS
            assert took_over < 60
            assert bound_at_kill < PODS  # the standby had work left to take over
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


async def _until(cond, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{cond.__name__} not reached within {timeout}s")
        await asyncio.sleep(0.05)
