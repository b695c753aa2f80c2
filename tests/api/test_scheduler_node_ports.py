"""NodePorts through the API: a second pod asking for a host port already taken on the
only node stays Pending with kube-scheduler's message, and schedules when the first goes."""

from __future__ import annotations

import pytest
from _lifecycle import eventually

from mockkube.client.client import Client
from mockkube.scheduler.scheduler import Scheduler
from mockkube.testing.cluster import running_server

WANT = (
    "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. no new claims to "
    "deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
)


@pytest.fixture
async def env():
    async with running_server(components=False) as server:
        sched = Scheduler(server, initial_backoff=0.01, max_backoff=0.05, seed=1)
        await sched.start()
        try:
            yield Client(server.resources, manager="test")
        finally:
            await sched.stop()


def pod(c: Client, name: str, host_port: int) -> None:
    c.create(
        c.rt("pods"),
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": host_port}]}]
            },
        },
    )


def message(c: Client, name: str) -> str:
    p = c.get(c.rt("pods"), "default", name)
    for cond in (p.get("status") or {}).get("conditions") or ():
        if cond["type"] == "PodScheduled" and cond["status"] == "False":
            return cond.get("message", "")
    return ""


async def test_host_port_conflict_pends_until_freed(env):
    c = env
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    c.create(
        c.rt("nodes"),
        {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}, "status": {"allocatable": alloc}},
    )
    pod(c, "first", 8080)
    await eventually(lambda: c.get(c.rt("pods"), "default", "first")["spec"].get("nodeName"), 5)
    pod(c, "other-port", 8081)
    pod(c, "second", 8080)
    await eventually(lambda: message(c, "second") == WANT, 5)
    assert c.get(c.rt("pods"), "default", "other-port")["spec"].get("nodeName") == "n1"
    c.delete(c.rt("pods"), "default", "first", {"gracePeriodSeconds": 0})
    await eventually(lambda: c.get(c.rt("pods"), "default", "second")["spec"].get("nodeName") == "n1", 5)
