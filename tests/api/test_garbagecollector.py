"""Garbage collector over the in-process API: background, foreground, orphan,
blockOwnerDeletion, dangling and uid-mismatched owners."""

from __future__ import annotations

import pytest
from _lifecycle import cm, eventually, owner_ref, settle

from mockkube.client.client import Client, clone
from mockkube.testing.cluster import running_server


@pytest.fixture
async def env():
    async with running_server(components=True) as server:
        c = Client(server.resources, manager="test")
        yield server, c


def _apps(c: Client, name: str, ns: str = "default") -> dict:
    return c.create(
        c.rt("deployments", "apps"),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        },
    )


async def test_background_deletes_dependents_after_owner(env):
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("owner"))
    c.create(cms, cm("dep1", owners=[owner_ref(owner)]))
    c.create(cms, cm("dep2", owners=[owner_ref(owner, block=True)]))
    await settle()
    assert c.get(cms, "default", "dep1") is not None  # a live owner keeps its dependents
    assert c.delete(cms, "default", "owner") is None
    await eventually(lambda: c.get(cms, "default", "dep1") is None and c.get(cms, "default", "dep2") is None)


async def test_events_are_ignored_as_upstream_ignores_them(env):
    """kube-controller-manager's garbage collector ignores Events (DefaultIgnoredResources): an
    Event whose owner is deleted stays (until its TTL), and the graph holds no Event."""
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("ev-owner"))
    c.create(cms, cm("ev-dep", owners=[owner_ref(owner)]))
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "ev-of-owner", "namespace": "default", "ownerReferences": [owner_ref(owner)]},
        "involvedObject": {"kind": "ConfigMap", "namespace": "default", "name": "ev-owner"},
        "reason": "Test",
        "message": "m",
    }
    c.create(c.rt("events"), ev)
    await settle()
    assert c.delete(cms, "default", "ev-owner") is None
    await eventually(lambda: c.get(cms, "default", "ev-dep") is None)  # the owner's deletion is handled
    await settle()
    assert c.get(c.rt("events"), "default", "ev-of-owner") is not None
    gc = next(x for x in server.components if x.name == "garbage-collector")
    assert not any(key[0] == "core/events" for key in gc.by_uid.values())


async def test_cascade_through_a_chain_of_kinds(env):
    server, c = env
    deploy = _apps(c, "web")
    rs_rt = c.rt("replicasets", "apps")
    rs = c.create(
        rs_rt,
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "default", "ownerReferences": [owner_ref(deploy, True, True)]},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        },
    )
    pods = c.rt("pods")
    c.create(
        pods,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-1-a", "namespace": "default", "ownerReferences": [owner_ref(rs, True, True)]},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    c.delete(c.rt("deployments", "apps"), "default", "web")
    await eventually(lambda: c.get(pods, "default", "web-1-a") is None)
    assert c.get(rs_rt, "default", "web-1") is None


async def test_foreground_waits_for_blocking_dependents(env):
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("fg"))
    # the blocking dependent is held by a finalizer so the owner must wait for it
    c.create(cms, cm("held", owners=[owner_ref(owner, block=True)], finalizers=["example.com/hold"]))
    c.create(cms, cm("free", owners=[owner_ref(owner, block=False)]))
    pending = c.delete(cms, "default", "fg", {"propagationPolicy": "Foreground"})
    assert pending is not None and "foregroundDeletion" in pending["metadata"]["finalizers"]
    await eventually(lambda: c.get(cms, "default", "free") is None)
    await eventually(lambda: (c.get(cms, "default", "held") or {}).get("metadata", {}).get("deletionTimestamp"))
    await settle()
    assert c.get(cms, "default", "fg") is not None  # still blocked by "held"
    held = clone(c.get(cms, "default", "held"))
    held["metadata"]["finalizers"] = []
    c.update(cms, held)
    await eventually(lambda: c.get(cms, "default", "fg") is None)


async def test_foreground_non_blocking_dependents_do_not_hold_the_owner(env):
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("fg2"))
    c.create(cms, cm("nb", owners=[owner_ref(owner)], finalizers=["example.com/hold"]))
    c.delete(cms, "default", "fg2", {"propagationPolicy": "Foreground"})
    await eventually(lambda: c.get(cms, "default", "fg2") is None)
    dep = c.get(cms, "default", "nb")
    assert dep["metadata"].get("deletionTimestamp")  # deleted too, waiting for its own finalizer


async def test_foreground_without_dependents_removes_finalizer(env):
    server, c = env
    cms = c.rt("configmaps")
    c.create(cms, cm("alone"))
    c.delete(cms, "default", "alone", {"propagationPolicy": "Foreground"})
    await eventually(lambda: c.get(cms, "default", "alone") is None)


async def test_orphan_strips_owner_reference_and_keeps_dependents(env):
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("orph"))
    other = c.create(cms, cm("other"))
    c.create(cms, cm("kid", owners=[owner_ref(owner, block=True)]))
    c.create(cms, cm("kid2", owners=[owner_ref(owner), owner_ref(other)]))
    c.delete(cms, "default", "orph", {"propagationPolicy": "Orphan"})
    await eventually(lambda: c.get(cms, "default", "orph") is None)
    await settle()
    kid = c.get(cms, "default", "kid")
    assert kid is not None and "ownerReferences" not in kid["metadata"]
    kid2 = c.get(cms, "default", "kid2")
    assert [r["name"] for r in kid2["metadata"]["ownerReferences"]] == ["other"]


async def test_dependent_with_a_living_second_owner_survives_and_loses_the_dead_ref(env):
    server, c = env
    cms = c.rt("configmaps")
    a = c.create(cms, cm("a"))
    b = c.create(cms, cm("b"))
    c.create(cms, cm("shared", owners=[owner_ref(a), owner_ref(b)]))
    c.delete(cms, "default", "a")
    await eventually(
        lambda: [r["name"] for r in c.get(cms, "default", "shared")["metadata"]["ownerReferences"]] == ["b"]
    )
    c.delete(cms, "default", "b")
    await eventually(lambda: c.get(cms, "default", "shared") is None)


async def test_dangling_owner_and_uid_mismatch(env):
    server, c = env
    cms = c.rt("configmaps")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "never", "uid": "0000-ghost"}}
    c.create(cms, cm("orphaned", owners=[owner_ref(ghost)]))
    await eventually(lambda: c.get(cms, "default", "orphaned") is None)
    # an owner with that name exists but with another uid: still gone
    c.create(cms, cm("never"))
    c.create(cms, cm("mismatch", owners=[owner_ref(ghost)]))
    await eventually(lambda: c.get(cms, "default", "mismatch") is None)
    assert c.get(cms, "default", "never") is not None


async def test_owner_recreated_with_same_name_does_not_adopt(env):
    server, c = env
    cms = c.rt("configmaps")
    old = c.create(cms, cm("phoenix"))
    c.create(cms, cm("child", owners=[owner_ref(old)]))
    c.delete(cms, "default", "phoenix")
    c.create(cms, cm("phoenix"))
    await eventually(lambda: c.get(cms, "default", "child") is None)


async def test_owner_in_other_namespace_counts_as_absent(env):
    server, c = env
    cms = c.rt("configmaps")
    owner = c.create(cms, cm("elsewhere", ns="kube-system"))
    c.create(cms, cm("cross", owners=[owner_ref(owner)]))
    await eventually(lambda: c.get(cms, "default", "cross") is None)
    assert c.get(cms, "kube-system", "elsewhere") is not None


async def test_cluster_scoped_owner_of_namespaced_dependent(env):
    server, c = env
    nodes = c.rt("nodes")
    node = c.create(nodes, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    cms = c.rt("configmaps")
    c.create(cms, cm("per-node", owners=[owner_ref(node)]))
    await settle()
    assert c.get(cms, "default", "per-node") is not None
    c.delete(nodes, "", "n1")
    await eventually(lambda: c.get(cms, "default", "per-node") is None)


async def test_unknown_owner_kind_is_left_alone(env):
    server, c = env
    cms = c.rt("configmaps")
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "u-1"}
    c.create(cms, cm("unresolvable", owners=[ref]))
    await settle(200)
    assert c.get(cms, "default", "unresolvable") is not None


async def test_existing_dangling_dependents_are_collected_at_start():
    async with running_server(components=False) as server:
        c = Client(server.resources, manager="test")
        cms = c.rt("configmaps")
        ghost = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone", "uid": "x"}}
        c.create(cms, cm("stale", owners=[owner_ref(ghost)]))
        from mockkube.controllers import garbagecollector

        started = await garbagecollector.start(server)
        try:
            await eventually(lambda: c.get(cms, "default", "stale") is None)
        finally:
            for s in started:
                await s.stop()
