"""PodTopologySpread through the API: a Deployment with a zone constraint
(maxSkew 1, DoNotSchedule) spreads over zones, and the replica that would break the skew
stays Pending with kube-scheduler's message; without constraints, the system default
(hostname, ScheduleAnyway) spreads a Deployment's replicas over nodes."""

from __future__ import annotations

import pytest
from _lifecycle import eventually

from mockkube.client.client import Client
from mockkube.controllers import deployment, replicaset
from mockkube.scheduler.scheduler import Scheduler
from mockkube.testing.cluster import running_server

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
async def env():
    async with running_server(components=False) as server:
        started = await replicaset.start(server) + await deployment.start(server)
        sched = Scheduler(server, initial_backoff=0.01, max_backoff=0.05, seed=1)
        await sched.start()
        try:
            c = Client(server.resources, manager="test")
            c.sched = sched
            yield c
        finally:
            await sched.stop()
            for s in reversed(started):
                await s.stop()


def node(c: Client, name: str, zone: str, pods: str = "110") -> None:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": pods}
    c.create(
        c.rt("nodes"),
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"capacity": alloc, "allocatable": alloc},
        },
    )


def deploy(name: str, replicas: int, constraints: list | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def pods(c: Client, app: str) -> list[dict]:
    return [p for p in c.list(c.rt("pods"), "default") if (p["metadata"].get("labels") or {}).get("app") == app]


def pending_message(p: dict) -> str:
    for cond in (p.get("status") or {}).get("conditions") or ():
        if cond["type"] == "PodScheduled" and cond["status"] == "False":
            return cond.get("message", "")
    return ""


async def test_zone_spread_with_do_not_schedule(env):
    c = env
    node(c, "a", "zone1")
    node(c, "b", "zone1")
    node(c, "c", "zone2", pods="1")  # room for one pod only
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    c.create(c.rt("deployments", "apps"), deploy("web", 4, [constraint]))
    want = (
        "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for "
        "incoming pod."
    )

    def settled():
        ps = pods(c, "web")
        bound = sorted(p["spec"].get("nodeName") or "" for p in ps)
        waiting = [pending_message(p) for p in ps if not p["spec"].get("nodeName")]
        return len(ps) == 4 and waiting == [want] and bound

    bound = await eventually(settled, 10)
    zones = {"a": "zone1", "b": "zone1", "c": "zone2"}
    assert sorted(zones[n] for n in bound if n) == ["zone1", "zone1", "zone2"]


async def test_system_default_spreads_replicas_over_nodes(env):
    c = env
    for n in ("a", "b", "c"):
        node(c, n, "zone1")
    c.create(c.rt("deployments", "apps"), deploy("spread", 6))
    await eventually(
        lambda: len(pods(c, "spread")) == 6 and all(p["spec"].get("nodeName") for p in pods(c, "spread")), 10
    )
    per_node: dict[str, int] = {}
    for p in pods(c, "spread"):
        per_node[p["spec"]["nodeName"]] = per_node.get(p["spec"]["nodeName"], 0) + 1
    assert sorted(per_node.values()) == [2, 2, 2]
    # the default constraints' selector: the ReplicaSet's selector ANDed with the Services'
    c.create(
        c.rt("services"),
        {
            "metadata": {"name": "svc", "namespace": "default"},
            "spec": {"selector": {"app": "spread"}, "ports": [{"port": 80}]},
        },
    )
    await eventually(lambda: c.sched.informers["services"].get("default", "svc"), 5)
    sel = c.sched._default_spread_selector(pods(c, "spread")[0])
    assert sorted(r.key for r in sel.requirements) == ["app", "app", "pod-template-hash"]
    assert c.sched._default_spread_selector({"metadata": {"namespace": "default", "labels": {"x": "y"}}}).empty
