"""DaemonSets as kubectl and helm use them: a pod per eligible node, rollout status, a
rolling update with ControllerRevisions, nodes joining and leaving, a DRA driver's chart
installed with `helm install --wait`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
CHART = str(Path(__file__).parent / "manifests" / "dra-driver-chart")

DS = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {example.com/accelerator: gpu}
      containers: [{name: agent, image: agent:1}]
"""


def pods_by_node(c, ns: str) -> dict[str, str]:
    items = json.loads(c.kubectl("get", "pods", "-n", ns, "-l", "app=agent", "-o", "json").stdout)["items"]
    return {
        p["spec"].get("nodeName", ""): p["metadata"]["labels"]["controller-revision-hash"]
        for p in items
        if not p["metadata"].get("deletionTimestamp")
    }


def test_rollout_of_a_daemonset(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=DS)
    out = c.kubectl("rollout", "status", "-n", ns, "ds/agent", "--timeout=30s").stdout
    assert 'daemon set "agent" successfully rolled out' in out
    first = pods_by_node(c, ns)
    assert set(first) == {"gpu-node-0", "gpu-node-1"}  # only the nodes the selector picks
    c.kubectl("set", "image", "-n", ns, "ds/agent", "agent=agent:2")
    c.kubectl("rollout", "status", "-n", ns, "ds/agent", "--timeout=30s")
    second = pods_by_node(c, ns)
    assert set(second) == set(first) and set(second.values()) != set(first.values())
    revs = c.kubectl("get", "controllerrevisions", "-n", ns, "-o", "jsonpath={.items[*].revision}").stdout.split()
    assert sorted(revs) == ["1", "2"]
    table = c.kubectl("get", "ds", "-n", ns, "agent").stdout.split("\n")[1].split()
    assert table[:6] == ["agent", "2", "2", "2", "2", "2"]  # desired current ready up-to-date available
    history = c.kubectl("rollout", "history", "-n", ns, "ds/agent").stdout
    assert "1" in history and "2" in history


def test_nodes_joining_and_leaving_get_and_lose_daemon_pods(mockkube, mockkube_namespace, tmp_path):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=DS)
    c.kubectl("rollout", "status", "-n", ns, "ds/agent", "--timeout=30s")
    profile = tmp_path / "more.yaml"
    profile.write_text("nodes:\n- name: gpu-extra\n  labels: {example.com/accelerator: gpu}\n")
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "mockkube", "apply-profile", str(profile), "--server", c.url],
        check=True,
        capture_output=True,
    )
    c.wait_for("daemonset", "agent", lambda d: (d.get("status") or {}).get("numberAvailable") == 3, ns)
    assert "gpu-extra" in pods_by_node(c, ns)
    c.kubectl("label", "node", "gpu-node-1", "example.com/accelerator-")
    c.wait_for(
        "daemonset",
        "agent",
        lambda d: (
            (d.get("status") or {}).get("desiredNumberScheduled") == 2
            and (d.get("status") or {}).get("numberMisscheduled") == 0
        ),
        ns,
    )
    assert set(pods_by_node(c, ns)) == {"gpu-node-0", "gpu-extra"}


def test_a_dra_driver_chart_installs_with_wait(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.helm("install", "drv", CHART, "-n", ns, "--wait", "--timeout", "60s")
    ds = json.loads(c.kubectl("get", "ds", "-n", ns, "drv-kubeletplugin", "-o", "json").stdout)
    assert ds["status"]["numberAvailable"] == ds["status"]["desiredNumberScheduled"] == 4
    pod = json.loads(c.kubectl("get", "pods", "-n", ns, "-o", "json").stdout)["items"][0]
    assert pod["spec"]["priorityClassName"] == "system-node-critical" and pod["spec"]["priority"] == 2000001000
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"][
        "tolerations"
    ]
    binding = c.kubectl("get", "clusterrolebinding", "drv-kubeletplugin", "-o", "wide").stdout
    assert "ClusterRole/drv-kubeletplugin" in binding and f"{ns}/drv-kubeletplugin" in binding
    c.helm("uninstall", "drv", "-n", ns, "--wait")
    assert c.kubectl("get", "ds", "-n", ns, "-o", "name").stdout == ""
