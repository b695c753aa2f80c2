"""The real kubectl against the Deployment/ReplicaSet controllers: create (protobuf),
scale (scale subresource) and rollout status (watch + status conditions)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from mockkube.machinery import errors, meta
from mockkube.testing import binaries

pytestmark = pytest.mark.e2e


def _mark_ready(cluster, app: str) -> int:
    """Set Ready on the app's live pods (until the kubelet simulator does it); returns how many are ready."""

    def fn():
        c = cluster.client("test-kubelet")
        pods = c.rt("pods")
        n = 0
        for p in c.list(pods, "default", label_selector=f"app={app}"):
            if p["metadata"].get("deletionTimestamp"):
                continue
            conds = {x["type"]: x for x in (p.get("status") or {}).get("conditions") or ()}
            if conds.get("Ready", {}).get("status") != "True":
                p = json.loads(json.dumps(p))
                p["status"] = {
                    **(p.get("status") or {}),
                    "phase": "Running",
                    "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": meta.rfc3339(time.time())}
                    ],
                }
                try:
                    c.update_status(pods, p)
                except errors.APIError as e:
                    if e.code not in (404, 409):
                        raise
                    continue
            n += 1
        return n

    return cluster.call(fn)


def _until_ready(cluster, app: str, want: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while _mark_ready(cluster, app) != want:
        if time.monotonic() > deadline:
            raise AssertionError(f"{want} ready pods of {app} not reached")
        time.sleep(0.05)


def _rollout_status(cluster, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [binaries.kubectl(), "rollout", "status", f"deployment/{name}", "--timeout=60s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cluster.env(),
    )


def test_create_scale_and_rollout_status(mockkube_fresh):
    k = mockkube_fresh.kubectl
    out = k("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2").stdout
    assert "deployment.apps/web created" in out
    waiter = _rollout_status(mockkube_fresh, "web")
    _until_ready(mockkube_fresh, "web", 2)
    stdout, stderr = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, stderr
    assert 'deployment "web" successfully rolled out' in stdout

    assert "deployment.apps/web scaled" in k("scale", "deployment/web", "--replicas=4").stdout
    waiter = _rollout_status(mockkube_fresh, "web")
    _until_ready(mockkube_fresh, "web", 4)
    stdout, stderr = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, stderr

    d = json.loads(k("get", "deployment", "web", "-o", "json").stdout)
    st = d["status"]
    assert st["observedGeneration"] == d["metadata"]["generation"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (4, 4, 4, 4)
    conds = {c["type"]: (c["status"], c["reason"]) for c in st["conditions"]}
    assert conds == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }
    rs = json.loads(k("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]
    assert len(rs) == 1 and rs[0]["metadata"]["name"].startswith("web-")
    assert rs[0]["status"]["readyReplicas"] == 4
    pods = k("get", "pods", "-l", "app=web", "-o", "name").stdout.split()
    assert len(pods) == 4 and all(p.startswith(f"pod/{rs[0]['metadata']['name']}-") for p in pods)


def test_set_image_rolls_out_a_new_replicaset(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("create", "deployment", "app", "--image=nginx:1", "--replicas=3")
    _until_ready(mockkube_fresh, "app", 3)
    k("set", "image", "deployment/app", "nginx=nginx:2")
    waiter = _rollout_status(mockkube_fresh, "app")
    deadline = time.monotonic() + 60
    while waiter.poll() is None and time.monotonic() < deadline:
        _mark_ready(mockkube_fresh, "app")
        time.sleep(0.05)
    stdout, stderr = waiter.communicate(timeout=10)
    assert waiter.returncode == 0, stderr
    assert 'deployment "app" successfully rolled out' in stdout
    history = k("rollout", "history", "deployment/app").stdout
    assert "1 " in history and "2 " in history
    images = json.loads(k("get", "rs", "-l", "app=app", "-o", "json").stdout)["items"]
    by_rev = {
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: (
            r["spec"]["replicas"],
            r["spec"]["template"]["spec"]["containers"][0]["image"],
        )
        for r in images
    }
    assert by_rev == {"1": (0, "nginx:1"), "2": (3, "nginx:2")}

    assert "rolled back" in k("rollout", "undo", "deployment/app").stdout
    waiter = _rollout_status(mockkube_fresh, "app")
    deadline = time.monotonic() + 60
    while waiter.poll() is None and time.monotonic() < deadline:
        _mark_ready(mockkube_fresh, "app")
        time.sleep(0.05)
    assert waiter.wait(10) == 0
    images = json.loads(k("get", "rs", "-l", "app=app", "-o", "json").stdout)["items"]
    by_rev = {
        r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: (
            r["spec"]["replicas"],
            r["spec"]["template"]["spec"]["containers"][0]["image"],
        )
        for r in images
    }
    assert by_rev == {"3": (3, "nginx:1"), "2": (0, "nginx:2")}  # the old ReplicaSet is reused
