"""Deployment and ReplicaSet controllers over the in-process API: names, labels, owners,
status for kstatus, rolling updates within maxSurge/maxUnavailable, Recreate, scaling."""

from __future__ import annotations

import pytest
from _lifecycle import eventually, settle

from mockkube.client.client import Client, clone
from mockkube.controllers import deployment, replicaset
from mockkube.controllers import deployment_util as du
from mockkube.machinery import errors, meta
from mockkube.testing.cluster import running_server

NOW = 1_800_000_000.0


@pytest.fixture
async def env():
    clock = [NOW]
    async with running_server(components=False, clock=lambda: clock[0]) as server:
        started = await replicaset.start(server) + await deployment.start(server)
        try:
            yield server, Client(server.resources, manager="test")
        finally:
            for c in reversed(started):
                await c.stop()


def _deploy(name: str, replicas: int = 3, strategy: dict | None = None, image: str = "nginx:1") -> dict:
    spec: dict = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": image}]}},
    }
    if strategy:
        spec["strategy"] = strategy
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def rts(c: Client):
    return c.rt("deployments", "apps"), c.rt("replicasets", "apps"), c.rt("pods")


def owned(c: Client, owner: dict, rt) -> list[dict]:
    uid = owner["metadata"]["uid"]
    return [
        o
        for o in c.list(rt, "default")
        if any(r.get("uid") == uid and r.get("controller") for r in o["metadata"].get("ownerReferences") or ())
    ]


def rs_of(c: Client, name: str) -> list[dict]:
    d_rt, rs_rt, _ = rts(c)
    d = c.get(d_rt, "default", name)
    return sorted(owned(c, d, rs_rt), key=du.revision)


def make_ready(c: Client, pod: dict, ready: bool = True) -> None:
    p = clone(c.get(c.rt("pods"), "default", pod["metadata"]["name"]))
    p["status"] = {
        **(p.get("status") or {}),
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": meta.rfc3339(NOW)}
        ],
    }
    c.update_status(c.rt("pods"), p)


def ready_all(c: Client) -> int:
    n = 0
    for p in c.list(c.rt("pods"), "default"):
        if not replicaset.is_pod_ready(p) and not p["metadata"].get("deletionTimestamp"):
            make_ready(c, p)
            n += 1
    return n


async def test_deployment_creates_one_replicaset_and_pods(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    d = c.create(d_rt, _deploy("web"))
    await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
    [rs] = owned(c, d, rs_rt)
    h = rs["metadata"]["labels"][du.HASH_LABEL]
    assert rs["metadata"]["name"] == f"web-{h}" and set(h) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert rs["metadata"]["labels"] == {"app": "web", du.HASH_LABEL: h}
    assert rs["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": d["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", du.HASH_LABEL: h}}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", du.HASH_LABEL: h}
    assert rs["spec"]["replicas"] == 3
    ann = rs["metadata"]["annotations"]
    assert ann[du.REVISION] == "1" and ann[du.DESIRED_REPLICAS] == "3" and ann[du.MAX_REPLICAS] == "4"
    assert c.get(d_rt, "default", "web")["metadata"]["annotations"][du.REVISION] == "1"
    for p in c.list(pod_rt, "default"):
        m = p["metadata"]
        assert m["generateName"] == f"web-{h}-" and m["name"].startswith(f"web-{h}-")
        assert len(m["name"]) == len(f"web-{h}-") + 5
        assert m["labels"] == {"app": "web", du.HASH_LABEL: h}
        assert m["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": rs["metadata"]["name"],
                "uid": rs["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    # the Deployment's status follows its ReplicaSet's: wait for it rather than assume the order
    st = await eventually(
        lambda: (
            (c.get(d_rt, "default", "web").get("status") or {}).get("replicas") == 3
            and c.get(d_rt, "default", "web")["status"]
        )
    )
    assert st["replicas"] == 3 and st["updatedReplicas"] == 3 and st["unavailableReplicas"] == 3
    assert "readyReplicas" not in st and "availableReplicas" not in st
    conds = {x["type"]: x for x in st["conditions"]}
    assert conds["Available"]["status"] == "False" and conds["Available"]["reason"] == "MinimumReplicasUnavailable"
    assert conds["Progressing"]["status"] == "True" and conds["Progressing"]["reason"] == "ReplicaSetUpdated"


async def test_ready_pods_make_status_kstatus_current(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    c.create(d_rt, _deploy("api"))
    await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
    ready_all(c)

    def current():
        d = c.get(d_rt, "default", "api")
        st = d.get("status") or {}
        conds = {x["type"]: x for x in st.get("conditions") or ()}
        return (
            st.get("observedGeneration") == d["metadata"]["generation"]
            and all(st.get(k, 0) >= 3 for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"))
            and conds.get("Available", {}).get("status") == "True"
            and conds.get("Progressing", {}).get("reason") == "NewReplicaSetAvailable"
            and d
        )

    d = await eventually(current)
    st = d["status"]
    assert "unavailableReplicas" not in st and st["terminatingReplicas"] == 0
    conds = {x["type"]: x for x in st["conditions"]}
    assert conds["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conds["Available"]["message"] == "Deployment has minimum availability."
    [rs] = rs_of(c, "api")
    assert conds["Progressing"]["message"] == f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.'
    assert rs["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
        "terminatingReplicas": 0,
    }


async def _roll(c: Client, name: str, max_total: int, min_ready: int) -> None:
    """Mark pods ready step by step until the rollout ends, checking the bounds each step."""
    d_rt, rs_rt, pod_rt = rts(c)
    for _ in range(50):
        await settle(200)
        rss = rs_of(c, name)
        assert sum(du.replicas(rs) for rs in rss) <= max_total
        live = [p for p in c.list(pod_rt, "default") if not p["metadata"].get("deletionTimestamp")]
        assert len(live) <= max_total
        assert sum(1 for p in live if replicaset.is_pod_ready(p)) >= min_ready
        new = rss[-1]
        if (
            du.replicas(new) == 3
            and all(du.replicas(rs) == 0 for rs in rss[:-1])
            and du.status_int(new, "availableReplicas") == 3
        ):
            return
        ready_all(c)
    raise AssertionError("rollout did not finish")


async def test_rolling_update_respects_surge_and_unavailable(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    c.create(d_rt, _deploy("roll"))
    await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
    ready_all(c)
    await eventually(lambda: du.status_int(c.get(d_rt, "default", "roll"), "availableReplicas") == 3)
    d = clone(c.get(d_rt, "default", "roll"))
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    c.update(d_rt, d)
    # 25% of 3: maxSurge rounds up to 1, maxUnavailable down to 0 -> one new pod, no old one gone
    await eventually(lambda: len(rs_of(c, "roll")) == 2 and len(c.list(pod_rt, "default")) == 4)
    await settle(200)
    old, new = rs_of(c, "roll")
    assert du.replicas(old) == 3 and du.replicas(new) == 1
    assert new["metadata"]["annotations"][du.REVISION] == "2"
    assert old["metadata"]["annotations"][du.REVISION] == "1"
    assert new["metadata"]["name"] != old["metadata"]["name"]
    await _roll(c, "roll", max_total=4, min_ready=3)
    d = await eventually(
        lambda: (
            (x := c.get(d_rt, "default", "roll"))
            and {k["type"]: k for k in x["status"]["conditions"]}["Progressing"]["reason"] == "NewReplicaSetAvailable"
            and x
        )
    )
    assert d["metadata"]["annotations"][du.REVISION] == "2"
    assert d["status"]["updatedReplicas"] == 3 and d["status"]["replicas"] == 3


async def test_rolling_update_with_unavailable_budget(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    c.create(
        d_rt,
        _deploy("budget", strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
    )
    await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
    ready_all(c)
    await eventually(lambda: du.status_int(c.get(d_rt, "default", "budget"), "availableReplicas") == 3)
    d = clone(c.get(d_rt, "default", "budget"))
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    c.update(d_rt, d)
    await eventually(lambda: [du.replicas(rs) for rs in rs_of(c, "budget")] == [2, 1])
    await settle(200)
    assert [du.replicas(rs) for rs in rs_of(c, "budget")] == [2, 1]
    await _roll(c, "budget", max_total=3, min_ready=2)


async def test_scale_up_and_down_deletes_unready_pods_first(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    c.create(d_rt, _deploy("sc", replicas=2))
    await eventually(lambda: len(c.list(pod_rt, "default")) == 2)
    ready_all(c)
    d = clone(c.get(d_rt, "default", "sc"))
    d["spec"]["replicas"] = 5
    c.update(d_rt, d)
    await eventually(lambda: len(c.list(pod_rt, "default")) == 5)
    [rs] = rs_of(c, "sc")
    assert du.replicas(rs) == 5 and rs["metadata"]["annotations"][du.DESIRED_REPLICAS] == "5"
    ready = {p["metadata"]["name"] for p in c.list(pod_rt, "default") if replicaset.is_pod_ready(p)}
    assert len(ready) == 2
    d = clone(c.get(d_rt, "default", "sc"))
    d["spec"]["replicas"] = 2
    c.update(d_rt, d)
    await eventually(lambda: len(c.list(pod_rt, "default")) == 2)
    assert {p["metadata"]["name"] for p in c.list(pod_rt, "default")} == ready
    assert len(rs_of(c, "sc")) == 1  # scaling never makes a new ReplicaSet
    await eventually(lambda: c.get(d_rt, "default", "sc")["status"].get("replicas") == 2)


async def test_recreate_waits_for_old_pods_to_go(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    c.create(d_rt, _deploy("rec", strategy={"type": "Recreate"}))
    await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
    for p in c.list(pod_rt, "default"):  # scheduled pods terminate gracefully
        c.bind("default", p["metadata"]["name"], "node-1")
    ready_all(c)
    d = clone(c.get(d_rt, "default", "rec"))
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    c.update(d_rt, d)
    await eventually(lambda: du.replicas(rs_of(c, "rec")[0]) == 0)
    await eventually(lambda: all(p["metadata"].get("deletionTimestamp") for p in c.list(pod_rt, "default")))
    await settle(200)
    assert len(rs_of(c, "rec")) == 1  # no new ReplicaSet while old pods still run
    for p in c.list(pod_rt, "default"):
        c.finalize_delete(pod_rt, "default", p["metadata"]["name"])
    await eventually(lambda: len(rs_of(c, "rec")) == 2 and len(c.list(pod_rt, "default")) == 3)
    old, new = rs_of(c, "rec")
    assert du.replicas(new) == 3 and du.replicas(old) == 0
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == new["metadata"]["uid"] for p in c.list(pod_rt, "default"))


async def test_deleted_replicaset_is_recreated(env):
    server, c = env
    from mockkube.controllers import garbagecollector

    gc = await garbagecollector.start(server)
    try:
        d_rt, rs_rt, pod_rt = rts(c)
        c.create(d_rt, _deploy("again"))
        await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
        [rs] = rs_of(c, "again")
        c.delete(rs_rt, "default", rs["metadata"]["name"])
        new = await eventually(
            lambda: (
                (x := c.get(rs_rt, "default", rs["metadata"]["name"]))
                and x["metadata"]["uid"] != rs["metadata"]["uid"]
                and x
            )
        )
        assert new["metadata"]["labels"] == rs["metadata"]["labels"]  # same template, same hash, same name
        # the garbage collector removes the old pods; the new ReplicaSet makes three of its own
        await eventually(
            lambda: (
                (ps := c.list(pod_rt, "default"))
                and len(ps) == 3
                and all(p["metadata"]["ownerReferences"][0]["uid"] == new["metadata"]["uid"] for p in ps)
            )
        )
    finally:
        for x in gc:
            await x.stop()


async def test_orphaned_pods_are_adopted_not_duplicated(env):
    server, c = env
    from mockkube.controllers import garbagecollector

    gc = await garbagecollector.start(server)
    try:
        d_rt, rs_rt, pod_rt = rts(c)
        c.create(d_rt, _deploy("adopt"))
        await eventually(lambda: len(c.list(pod_rt, "default")) == 3)
        before = {p["metadata"]["name"] for p in c.list(pod_rt, "default")}
        [rs] = rs_of(c, "adopt")
        c.delete(rs_rt, "default", rs["metadata"]["name"], {"propagationPolicy": "Orphan"})
        new = await eventually(
            lambda: (
                (x := c.get(rs_rt, "default", rs["metadata"]["name"]))
                and x["metadata"]["uid"] != rs["metadata"]["uid"]
                and x
            )
        )
        await eventually(
            lambda: all(
                (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == new["metadata"]["uid"]
                for p in c.list(pod_rt, "default")
            )
        )
        await settle(200)
        assert {p["metadata"]["name"] for p in c.list(pod_rt, "default")} == before
    finally:
        for x in gc:
            await x.stop()


async def test_empty_or_mismatched_selector_is_invalid(env):
    server, c = env
    d_rt, rs_rt, pod_rt = rts(c)
    obj = _deploy("all")
    obj["spec"]["selector"] = {}
    with pytest.raises(errors.APIError) as e:
        c.create(d_rt, obj)
    assert e.value.code == 422 and e.value.details["causes"][0]["field"] == "spec.selector"
    obj["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(errors.APIError) as e:
        c.create(d_rt, obj)
    assert e.value.details["causes"][0]["field"] == "spec.template.metadata.labels"
    assert c.list(rs_rt, "default") == []
