"""Workload controllers over HTTP with the whole cluster running (the default demo nodes):
ReplicationController (the ReplicaSet logic), DaemonSet and StatefulSet pods, revisions
and status."""

from __future__ import annotations

import pytest
import requests

from mockkube.testing.cluster import ThreadedCluster
from mockkube.testing.waiting import until

NS = "wl"


def _tpl(app: str, image: str = "busybox:1") -> dict:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": image}]}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ThreadedCluster(workdir=str(tmp_path_factory.mktemp("wlc"))).start()
    s = requests.Session()
    assert s.post(c.url + "/api/v1/namespaces", json={"metadata": {"name": NS}}).status_code == 201
    c.http = s
    try:
        yield c
    finally:
        c.stop()


def _get(c, path: str) -> dict:
    r = c.http.get(c.url + path)
    assert r.status_code == 200, r.text
    return r.json()


def _pods(c, selector: str) -> list[dict]:
    return _get(c, f"/api/v1/namespaces/{NS}/pods?labelSelector={selector}")["items"]


def _live(pods: list[dict]) -> list[dict]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def test_replicationcontroller_creates_scales_and_reports_status(cluster):
    c = cluster
    base = f"/api/v1/namespaces/{NS}/replicationcontrollers"
    r = c.http.post(c.url + base, json={"metadata": {"name": "rc"}, "spec": {"replicas": 2, "template": _tpl("rc")}})
    assert r.status_code == 201, r.text
    uid = r.json()["metadata"]["uid"]
    pods = until(lambda: len(_live(_pods(c, "app=rc"))) == 2 and _live(_pods(c, "app=rc")), what="two pods")
    for p in pods:
        assert p["metadata"]["generateName"] == "rc-"
        assert p["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "name": "rc",
                "uid": uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    st = until(lambda: (s := _get(c, base + "/rc")["status"]).get("readyReplicas") == 2 and s, what="ready")
    assert st["replicas"] == 2 and st["availableReplicas"] == 2 and st["fullyLabeledReplicas"] == 2
    assert st["observedGeneration"] == 1 and "terminatingReplicas" not in st
    r = c.http.patch(
        c.url + base + "/rc/scale",
        json={"spec": {"replicas": 1}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    until(lambda: len(_live(_pods(c, "app=rc"))) == 1, what="scaled to one pod")
    until(lambda: _get(c, base + "/rc")["status"]["replicas"] == 1, what="status.replicas 1")


def _nodes(c) -> list[str]:
    return sorted(n["metadata"]["name"] for n in _get(c, "/api/v1/nodes")["items"])


def test_daemonset_one_pod_per_node_revisions_and_status(cluster):
    c = cluster
    base = f"/apis/apps/v1/namespaces/{NS}/daemonsets"
    ds = {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": _tpl("agent")},
    }
    r = c.http.post(c.url + base, json=ds)
    assert r.status_code == 201, r.text
    nodes = _nodes(c)
    st = until(
        lambda: (s := _get(c, base + "/agent")["status"]).get("numberAvailable") == len(nodes) and s,
        what="every node's pod available",
    )
    assert st == {
        "currentNumberScheduled": len(nodes),
        "desiredNumberScheduled": len(nodes),
        "numberMisscheduled": 0,
        "numberReady": len(nodes),
        "numberAvailable": len(nodes),
        "updatedNumberScheduled": len(nodes),
        "observedGeneration": 1,
    }
    pods = _live(_pods(c, "app=agent"))
    assert sorted(p["spec"]["nodeName"] for p in pods) == nodes
    revs = _get(c, f"/apis/apps/v1/namespaces/{NS}/controllerrevisions?labelSelector=app=agent")["items"]
    assert len(revs) == 1 and revs[0]["revision"] == 1
    hash_ = revs[0]["metadata"]["labels"]["controller-revision-hash"]
    assert revs[0]["metadata"]["name"] == f"agent-{hash_}"
    assert revs[0]["data"]["spec"]["template"]["$patch"] == "replace"
    for p in pods:
        assert p["metadata"]["labels"]["controller-revision-hash"] == hash_
        assert p["metadata"]["labels"]["pod-template-generation"] == "1"
        tol = {(t["key"], t["effect"]) for t in p["spec"]["tolerations"]}
        assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tol
        assert ("node.kubernetes.io/not-ready", "NoExecute") in tol
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [p["spec"]["nodeName"]]}]}
            ]
        }
    # a new template rolls out one node at a time to a second revision
    r = c.http.patch(
        c.url + base + "/agent",
        json={"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200, r.text

    def rolled():
        s = _get(c, base + "/agent")["status"]
        pods = _live(_pods(c, "app=agent"))
        return (
            s.get("observedGeneration") == 2
            and s.get("updatedNumberScheduled") == len(nodes)
            and s.get("numberAvailable") == len(nodes)
            and len(pods) == len(nodes)
            and all(p["spec"]["containers"][0]["image"] == "busybox:2" for p in pods)
        )

    until(rolled, what="the new template on every node")
    revs = _get(c, f"/apis/apps/v1/namespaces/{NS}/controllerrevisions?labelSelector=app=agent")["items"]
    assert sorted(r["revision"] for r in revs) == [1, 2]


def test_daemonset_node_selector_limits_nodes(cluster):
    c = cluster
    base = f"/apis/apps/v1/namespaces/{NS}/daemonsets"
    node = _nodes(c)[0]
    tpl = _tpl("picky")
    tpl["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    r = c.http.post(
        c.url + base,
        json={"metadata": {"name": "picky"}, "spec": {"selector": {"matchLabels": {"app": "picky"}}, "template": tpl}},
    )
    assert r.status_code == 201, r.text
    until(lambda: _get(c, base + "/picky")["status"].get("numberAvailable") == 1, what="one pod")
    st = _get(c, base + "/picky")["status"]
    assert st["desiredNumberScheduled"] == 1
    assert [p["spec"]["nodeName"] for p in _live(_pods(c, "app=picky"))] == [node]
