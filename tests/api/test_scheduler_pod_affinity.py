"""InterPodAffinity through the API: a Deployment with required pod anti-affinity on the
hostname spreads one replica per node and its extra replica stays Pending with
kube-scheduler's FailedScheduling message; scaling in or adding a node lets it schedule."""

from __future__ import annotations

import pytest
from _lifecycle import eventually

from mockkube.client.client import Client, clone
from mockkube.controllers import deployment, replicaset
from mockkube.scheduler.scheduler import Scheduler
from mockkube.testing.cluster import running_server

ANTI = (
    "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, "
    "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
)


@pytest.fixture
async def env():
    async with running_server(components=False) as server:
        started = await replicaset.start(server) + await deployment.start(server)
        sched = Scheduler(server, initial_backoff=0.01, max_backoff=0.05, seed=1)
        await sched.start()
        c = Client(server.resources, manager="test")
        for i in range(3):
            node(c, f"worker-{i}")
        try:
            yield c
        finally:
            await sched.stop()
            for s in reversed(started):
                await s.stop()


def node(c: Client, name: str) -> None:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    c.create(
        c.rt("nodes"),
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": alloc, "allocatable": alloc},
        },
    )


def deploy(name: str, replicas: int, affinity: dict) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"affinity": affinity, "containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def anti_on_hostname(app: str) -> dict:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }


def pods(c: Client, app: str) -> list[dict]:
    return [
        p
        for p in c.list(c.rt("pods"), "default")
        if (p["metadata"].get("labels") or {}).get("app") == app and not p["metadata"].get("deletionTimestamp")
    ]


def pending_message(p: dict) -> str:
    for cond in (p.get("status") or {}).get("conditions") or ():
        if cond["type"] == "PodScheduled" and cond["status"] == "False":
            return cond.get("message", "")
    return ""


async def test_required_anti_affinity_spreads_and_extra_replica_pends(env):
    c = env
    c.create(c.rt("deployments", "apps"), deploy("web", 4, anti_on_hostname("web")))

    def spread():
        ps = pods(c, "web")
        bound = [p["spec"].get("nodeName") for p in ps if p["spec"].get("nodeName")]
        waiting = [pending_message(p) for p in ps if not p["spec"].get("nodeName")]
        return len(ps) == 4 and len(bound) == 3 and waiting == [ANTI] and (sorted(bound), waiting)

    got = await eventually(spread, 10)
    assert got[0] == ["worker-0", "worker-1", "worker-2"]
    events = [
        e
        for e in c.list(c.rt("events"), "default")
        if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"].startswith("web-")
    ]
    assert events and {e["message"] for e in events} == {ANTI} and all(e["type"] == "Warning" for e in events)

    # a new node (NodeAdd) lets the pending replica schedule there
    node(c, "worker-3")
    await eventually(lambda: all(p["spec"].get("nodeName") for p in pods(c, "web")) and len(pods(c, "web")) == 4, 10)
    assert sorted(p["spec"]["nodeName"] for p in pods(c, "web")) == ["worker-0", "worker-1", "worker-2", "worker-3"]


async def test_pending_replica_retried_when_a_blocking_pod_goes(env):
    """A pod deleted (AssignedPodDelete) or relabelled (AssignedPodUpdate) requeues the pod
    InterPodAffinity rejected."""
    c = env
    blockers = []
    for i in range(3):
        blockers.append(
            c.create(
                c.rt("pods"),
                {
                    "metadata": {"name": f"blocker-{i}", "namespace": "default", "labels": {"app": "db"}},
                    "spec": {"nodeName": f"worker-{i}", "containers": [{"name": "c", "image": "x"}]},
                },
            )
        )
    c.create(c.rt("deployments", "apps"), deploy("api", 1, anti_on_hostname("db")))
    await eventually(lambda: [pending_message(p) for p in pods(c, "api")] == [ANTI], 10)
    # relabel the blocker on worker-1: the pending pod fits there now
    b = clone(c.get(c.rt("pods"), "default", "blocker-1"))
    b["metadata"]["labels"] = {"app": "other"}
    c.update(c.rt("pods"), b)
    await eventually(lambda: [p["spec"].get("nodeName") for p in pods(c, "api")] == ["worker-1"], 10)


async def test_required_affinity_waits_for_its_peer(env):
    """A pod with required affinity to pods that do not exist yet is Pending with
    "didn't match pod affinity rules", and schedules beside the peer once it is bound
    (AssignedPodAdd)."""
    c = env
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    c.create(c.rt("deployments", "apps"), deploy("front", 1, affinity))
    want = (
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    await eventually(lambda: [pending_message(p) for p in pods(c, "front")] == [want], 10)
    c.create(
        c.rt("pods"),
        {
            "metadata": {"name": "cache-0", "namespace": "default", "labels": {"app": "cache"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
    )
    peer = await eventually(lambda: c.get(c.rt("pods"), "default", "cache-0")["spec"].get("nodeName"), 10)
    await eventually(lambda: [p["spec"].get("nodeName") for p in pods(c, "front")] == [peer], 10)


async def test_match_label_keys_merged_at_creation_and_honoured(env):
    """matchLabelKeys/mismatchLabelKeys (on in v1.36) are merged into labelSelector by the
    API server at creation, as kube-apiserver's PrepareForCreate does; the scheduler then
    spreads only over pods with the same value (here: the same rollout's hash)."""
    c = env
    term = {
        "labelSelector": {"matchLabels": {"app": "mlk"}},
        "topologyKey": "kubernetes.io/hostname",
        "matchLabelKeys": ["rev"],
        "mismatchLabelKeys": ["team"],
    }

    def make(name: str, rev: str) -> dict:
        return c.create(
            c.rt("pods"),
            {
                "metadata": {"name": name, "namespace": "default", "labels": {"app": "mlk", "rev": rev, "team": "t1"}},
                "spec": {
                    "containers": [{"name": "c", "image": "x"}],
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": {"app": "mlk"}},
                            "matchLabelKeys": ["rev"],
                        }
                    ],
                },
            },
        )

    p = make("r1-a", "1")
    sel = p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"]
    assert sel == {
        "matchLabels": {"app": "mlk"},
        "matchExpressions": [
            {"key": "rev", "operator": "In", "values": ["1"]},
            {"key": "team", "operator": "NotIn", "values": ["t1"]},
        ],
    }
    assert p["spec"]["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"] == [
        {"key": "rev", "operator": "In", "values": ["1"]}
    ]
    # the mismatch key makes pods of the same team never repel each other: all schedule
    for name, rev in (("r1-b", "1"), ("r2-a", "2"), ("r2-b", "2")):
        make(name, rev)
    await eventually(
        lambda: all(
            c.get(c.rt("pods"), "default", n)["spec"].get("nodeName") for n in ("r1-a", "r1-b", "r2-a", "r2-b")
        ),
        10,
    )
