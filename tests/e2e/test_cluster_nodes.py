"""The demo cluster through real kubectl: nodes Ready, leases, drivers' ResourceSlices and
device classes, cordoning."""

import json

import pytest

from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e


def test_demo_nodes_ready(mockkube_cluster):
    out = json.loads(mockkube_cluster.kubectl("get", "nodes", "-o", "json").stdout)
    ready = {
        n["metadata"]["name"]: {c["type"]: c["status"] for c in n["status"]["conditions"]}["Ready"]
        for n in out["items"]
    }
    assert ready == {"gpu-node-0": "True", "gpu-node-1": "True", "fpga-node": "True", "cpu-node": "True"}
    table = mockkube_cluster.kubectl("get", "nodes").stdout
    assert "gpu-node-0" in table and "Ready" in table
    leases = mockkube_cluster.kubectl("get", "leases", "-n", "kube-node-lease", "-o", "name").stdout.split()
    assert sorted(leases) == [
        "lease.coordination.k8s.io/cpu-node",
        "lease.coordination.k8s.io/fpga-node",
        "lease.coordination.k8s.io/gpu-node-0",
        "lease.coordination.k8s.io/gpu-node-1",
    ]


def test_resourceslices_and_deviceclasses(mockkube_cluster):
    out = json.loads(mockkube_cluster.kubectl("get", "resourceslices", "-o", "json").stdout)
    pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in out["items"]}
    assert {
        ("gpu.example.com", "gpu-node-0"),
        ("gpu.example.com", "gpu-node-1"),
        ("cpu.example.com", "cpu-node"),
        ("fpga.example.com", "fabric-a"),
    } <= pools
    table = mockkube_cluster.kubectl("get", "resourceslices").stdout
    assert "gpu.example.com" in table
    classes = mockkube_cluster.kubectl("get", "deviceclasses", "-o", "name").stdout.split()
    assert {
        "deviceclass.resource.k8s.io/gpu.example.com",
        "deviceclass.resource.k8s.io/fpga.example.com",
        "deviceclass.resource.k8s.io/cpu.example.com",
    } <= set(classes)


def test_cordon_taints_the_node_and_uncordon_removes_it(mockkube_fresh):
    k = mockkube_fresh.kubectl

    def taints():
        node = json.loads(k("get", "node", "cpu-node", "-o", "json").stdout)
        return [(t["key"], t["effect"]) for t in node["spec"].get("taints", [])]

    k("cordon", "cpu-node")
    until(lambda: ("node.kubernetes.io/unschedulable", "NoSchedule") in taints(), what="the unschedulable taint")
    assert "SchedulingDisabled" in k("get", "node", "cpu-node").stdout
    k("uncordon", "cpu-node")
    until(lambda: ("node.kubernetes.io/unschedulable", "NoSchedule") not in taints(), what="the taint removed")


def test_kubectl_logs_shows_what_the_pod_declares(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Pod
metadata:
  name: talker
  annotations:
    mockkube.io/log.app: |
      starting
      listening on :8080
spec:
  containers:
  - {name: app, image: web:1}
  - {name: sidecar, image: proxy:1}
""",
    )
    k("wait", "--for=condition=Ready", "pod/talker", "--timeout=60s")
    assert k("logs", "talker", "-c", "app").stdout == "starting\nlistening on :8080\n"
    assert k("logs", "talker", "-c", "app", "--tail=1").stdout == "listening on :8080\n"
    assert k("logs", "talker", "-c", "sidecar").stdout == ""
    p = k("logs", "talker")  # kubectl picks the first container itself
    assert p.stdout == "starting\nlistening on :8080\n" and 'Defaulted container "app"' in p.stderr
    p = k("get", "--raw", "/api/v1/namespaces/default/pods/talker/log", check=False)
    assert p.returncode != 0 and "a container name must be specified for pod talker" in p.stderr
    p = k("logs", "talker", "-c", "nope", check=False)
    assert p.returncode != 0 and "container nope is not valid for pod talker" in p.stderr
