"""The demo cluster through real kubectl: nodes Ready, drivers' ResourceSlices, device
classes, and a GPU pod from a ResourceClaimTemplate Running."""

import json

import pytest

from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e


def test_demo_nodes_ready(mockkube_cluster):
    out = json.loads(mockkube_cluster.kubectl("get", "nodes", "-o", "json").stdout)
    ready = {n["metadata"]["name"]: {c["type"]: c["status"] for c in n["status"]["conditions"]}["Ready"]
             for n in out["items"]}
    assert ready == {"gpu-node-0": "True", "gpu-node-1": "True", "fpga-node": "True", "cpu-node": "True"}
    table = mockkube_cluster.kubectl("get", "nodes").stdout
    assert "gpu-node-0" in table and "Ready" in table
    leases = mockkube_cluster.kubectl("get", "leases", "-n", "kube-node-lease", "-o", "name").stdout.split()
    assert sorted(leases) == ["lease.coordination.k8s.io/cpu-node", "lease.coordination.k8s.io/fpga-node",
                              "lease.coordination.k8s.io/gpu-node-0", "lease.coordination.k8s.io/gpu-node-1"]


def test_resourceslices_and_deviceclasses(mockkube_cluster):
    out = json.loads(mockkube_cluster.kubectl("get", "resourceslices", "-o", "json").stdout)
    pools = {(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in out["items"]}
    assert {("gpu.example.com", "gpu-node-0"), ("gpu.example.com", "gpu-node-1"),
            ("cpu.example.com", "cpu-node"), ("fpga.example.com", "fabric-a")} <= pools
    table = mockkube_cluster.kubectl("get", "resourceslices").stdout
    assert "gpu.example.com" in table
    classes = mockkube_cluster.kubectl("get", "deviceclasses", "-o", "name").stdout.split()
    assert {"deviceclass.resource.k8s.io/gpu.example.com", "deviceclass.resource.k8s.io/fpga.example.com",
            "deviceclass.resource.k8s.io/cpu.example.com"} <= set(classes)


GPU_POD = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: app
    image: cuda:12
    resources:
      claims: [{name: gpu}]
"""


def test_gpu_pod_from_template_runs(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=GPU_POD)

    def pod():
        return json.loads(k("get", "pod", "gpu-pod", "-o", "json").stdout)
    until(lambda: pod()["status"].get("phase") == "Running", what="the pod Running")
    p = pod()
    assert p["spec"]["nodeName"] in ("gpu-node-0", "gpu-node-1")
    claim_name = p["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = json.loads(k("get", "resourceclaim", claim_name, "-o", "json").stdout)
    assert claim["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [p["metadata"]["uid"]]
    from mockkube.kubelet.cluster import runtime_for

    rt = mockkube_fresh.call(lambda: runtime_for(mockkube_fresh.server.resources))
    res = mockkube_fresh.call(lambda: rt.kubelet.pod_resources(p["spec"]["nodeName"]))
    dyn = res["podResources"][0]["containers"][0]["dynamicResources"][0]
    assert dyn["claimName"] == claim_name
    assert dyn["claimResources"][0]["cdiDevices"][0]["name"].startswith("gpu.example.com/gpu=gpu-")
    events = k("get", "events", "--field-selector", "involvedObject.name=gpu-pod", "-o", "json").stdout
    assert "ResourceClaimPrepared" in events


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
