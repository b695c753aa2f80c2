"""Cluster faults, seen the way a real cluster shows them: a failed NodePrepareResources
event and recovery once the fault is removed (CLI), an unhealthy device's taint on its
ResourceSlice (Python), a node whose kubelet stops going NotReady and coming back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mockkube.testing.clock import FakeClock
from mockkube.testing.cluster import ThreadedCluster
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]


def cli(cluster, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "mockkube", "fault", *args, "--server", cluster.url],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def test_prepare_failure_shows_as_event_and_the_pod_recovers_when_cleared(mockkube_fresh):
    k = mockkube_fresh.kubectl
    added = json.loads(
        cli(
            mockkube_fresh,
            "add",
            "prepare-failure",
            "--drivers",
            "gpu.example.com",
            "--message",
            "device busy (injected)",
        )
    )
    assert added["kind"] == "prepare-failure" and added["drivers"] == ["gpu.example.com"]
    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-cats.yaml"))
    until(
        lambda: (
            "device busy (injected)"
            in k("get", "events", "--field-selector", "reason=FailedPrepareDynamicResources").stdout
        ),
        what="FailedPrepareDynamicResources event",
    )
    pod = json.loads(k("get", "pod", "pod-with-cats", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Pending" and pod["spec"].get("nodeName")
    assert [f["id"] for f in json.loads(cli(mockkube_fresh, "list"))["items"]] == [added["id"]]
    cli(mockkube_fresh, "delete", "--all")
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/pod-with-cats", "--timeout=60s")


def test_device_health_flip_taints_the_device_until_cleared(mockkube_fresh):
    k = mockkube_fresh.kubectl

    def taints() -> list:
        slices = json.loads(k("get", "resourceslices", "-o", "json").stdout)["items"]
        return [
            (d["name"], t["effect"])
            for s in slices
            if s["spec"]["pool"]["name"] == "gpu-node-1" and s["spec"]["driver"] == "gpu.example.com"
            for d in s["spec"].get("devices") or ()
            for t in d.get("taints") or ()
        ]

    f = mockkube_fresh.inject(
        {
            "kind": "device-unhealthy",
            "driver": "gpu.example.com",
            "pool": "gpu-node-1",
            "device": "gpu-2",
            "effect": "NoExecute",
        }
    )
    until(lambda: taints() == [("gpu-2", "NoExecute")], what="device taint")
    assert mockkube_fresh.server.faults.list()[0]["id"] == f.id
    assert mockkube_fresh.clear_faults() == 1
    until(lambda: taints() == [], what="taint removed")


def test_node_notready_and_back(tmp_path):
    c = ThreadedCluster(workdir=str(tmp_path), clock=FakeClock()).start()
    try:

        def ready() -> str:
            node = json.loads(c.kubectl("get", "node", "cpu-node", "-o", "json").stdout)
            return next(x["status"] for x in node["status"]["conditions"] if x["type"] == "Ready")

        until(lambda: ready() == "True", what="node ready")
        c.inject({"kind": "node-notready", "node": "cpu-node", "durationSeconds": 600})
        c.advance(60)  # past the node monitor grace period without lease renewals
        until(lambda: ready() == "Unknown", what="node NotReady (Unknown)")
        c.advance(600)  # the fault's end: the kubelet starts again
        assert c.server.faults.list() == []
        c.advance(10)  # its next status heartbeat reports Ready
        until(lambda: ready() == "True", what="node ready again")
    finally:
        c.stop()
