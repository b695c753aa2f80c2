"""Reset between tests and the clock, over HTTP: the cluster goes back to the state it
settled into after start (objects, allocations, kubelet and driver state, clock, hooks)
while resourceVersions keep rising and watchers see every change."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest

import mockkube

PROFILE = """
nodes:
- name: node
  drivers:
    gpu.example.com: {count: 2}
"""
G = "/apis/resource.k8s.io/v1"


@pytest.fixture(scope="module")
def cluster():
    with mockkube.Cluster(profile=PROFILE) as c:
        yield c


def pod_with_gpu(name: str) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        },
    }


def run_two_gpu_pods(c: mockkube.Cluster, ns: str) -> None:
    r = c.http.post(
        f"{c.url}{G}/namespaces/{ns}/resourceclaimtemplates",
        json={
            "metadata": {"name": "one-gpu"},
            "spec": {
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
            },
        },
    )
    assert r.status_code == 201, r.text
    for name in ("a", "b"):
        assert c.http.post(f"{c.url}/api/v1/namespaces/{ns}/pods", json=pod_with_gpu(name)).status_code == 201
    for name in ("a", "b"):
        c.wait_for_pod_phase(name, "Running", ns)


def test_reset_frees_devices_and_forgets_what_tests_created(cluster):
    """Both GPUs taken, reset, both GPUs taken again: allocations and kubelet state went
    back with the objects (a third pod would stay Pending if they had not)."""
    c = cluster
    c.reset()
    rv_before = int(c.http.get(c.url + "/api/v1/namespaces").json()["metadata"]["resourceVersion"])
    ns = c.create_namespace()
    run_two_gpu_pods(c, ns)
    out = c.reset()
    assert out["deleted"] >= 6  # namespace, template, 2 pods, 2 claims (and their events)
    assert c.get("namespace", ns) is None
    assert c.http.get(f"{c.url}{G}/resourceclaims").json()["items"] == []
    rv_after = int(c.http.get(c.url + "/api/v1/namespaces").json()["metadata"]["resourceVersion"])
    assert rv_after > rv_before  # rising, never rewound
    ns = c.create_namespace()
    run_two_gpu_pods(c, ns)


def test_reset_restores_changed_and_deleted_objects_of_the_profile(cluster):
    c = cluster
    c.reset()
    node = c.get("node", "node-0") or c.get("node", "node")
    name = node["metadata"]["name"]
    c.kubectl("label", "node", name, "team=x")
    c.kubectl("delete", "deviceclass", "gpu.example.com")
    c.reset()
    assert "team" not in c.get("node", name)["metadata"].get("labels", {})
    assert c.get("deviceclass", "gpu.example.com") is not None


def test_watchers_see_the_reset_as_events(cluster):
    c = cluster
    c.reset()
    ns = c.create_namespace()
    assert (
        c.http.post(f"{c.url}/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": "x"}}).status_code == 201
    )
    lst = c.http.get(f"{c.url}/api/v1/namespaces/{ns}/configmaps").json()
    seen: list[tuple[str, str]] = []

    def watch() -> None:
        with c.http.get(
            f"{c.url}/api/v1/namespaces/{ns}/configmaps",
            stream=True,
            params={"watch": "1", "resourceVersion": lst["metadata"]["resourceVersion"], "timeoutSeconds": "10"},
        ) as r:
            for line in r.iter_lines():
                if line:
                    ev = json.loads(line)
                    seen.append((ev["type"], ev["object"]["metadata"]["name"]))
                    if ev["type"] == "DELETED" and ev["object"]["metadata"]["name"] == "x":
                        return

    t = threading.Thread(target=watch)
    t.start()
    c.reset()  # the watch starts at the list's resourceVersion: it sees the deletion whenever it connects
    t.join(15)
    assert ("DELETED", "x") in seen


def test_reset_is_fast(cluster):
    """Well under 100 ms on this small cluster after a typical test (the benchmark in
    tests/bench/bench_reset.py prints the figure; the bound here allows a loaded machine)."""
    c = cluster
    c.reset()
    ns = c.create_namespace()
    for i in range(20):
        c.http.post(f"{c.url}/api/v1/namespaces/{ns}/configmaps", json={"metadata": {"name": f"c{i}"}})
    out = c.reset()
    assert out["deleted"] >= 21 and out["seconds"] < 1.0


def test_clock_moves_over_http_and_reset_brings_it_back(cluster):
    c = cluster
    c.reset()
    start = c.clock.now()
    moved = c.clock.advance(timedelta(hours=1))
    assert moved - start >= timedelta(minutes=59, seconds=59)
    frozen = c.clock.freeze()
    assert c.clock.frozen and c.clock.now() == frozen
    assert c.clock.advance("90s") == frozen + timedelta(seconds=90)
    c.clock.unfreeze()
    c.reset()
    assert not c.clock.frozen and c.clock.now() - start < timedelta(minutes=5)


@pytest.mark.parametrize(
    "body, message",
    [
        ({"advance": "-5m"}, "the clock only moves forward"),
        ({"advance": "soon"}, "invalid duration 'soon'"),
        ({"freeze": "yes"}, "freeze: must be true or false"),
        ({"advance": "1m", "freeze": True}, "exactly one of advance, set, freeze, reset"),
        ({"rewind": "1m"}, "exactly one of advance, set, freeze, reset"),
    ],
)
def test_bad_clock_requests_get_a_status(cluster, body, message):
    r = cluster.http.post(cluster.url + "/mockkube/v1/clock", json=body)
    st = r.json()
    assert r.status_code == 400 and st["kind"] == "Status" and st["reason"] == "BadRequest"
    assert message in st["message"]


def test_reset_runs_registered_hooks_and_resets_a_frozen_clock():
    with mockkube.Cluster(profile="nodes: []\ndeviceClasses: false\n", frozen_clock=True) as c:
        calls = []
        c.server.on_reset(lambda: calls.append(c.server.clock()))
        t0 = c.clock.now()
        c.clock.advance(timedelta(days=1))
        c.reset()
        assert calls and c.clock.now() == t0 and c.clock.frozen


def test_a_pod_run_follows_the_clock_moved_over_http(cluster):
    """The kubelet reads the cluster clock: a container that exits after an hour finishes
    as soon as the clock is moved past that hour."""
    c = cluster
    c.reset()
    ns = c.create_namespace()
    pod = {
        "metadata": {"name": "batch", "annotations": {"mockkube.io/exit-after": "1h"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
    }
    assert c.http.post(f"{c.url}/api/v1/namespaces/{ns}/pods", json=pod).status_code == 201
    c.wait_for_pod_phase("batch", "Running", ns)
    c.clock.advance(timedelta(minutes=61))
    done = c.wait_for_pod_phase("batch", "Succeeded", ns, timeout=10)
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
