"""The whole DRA flow on the demo cluster, driven with the real kubectl: templates become
claims, the scheduler allocates, kubelets prepare through the drivers, deletion cleans up,
device health evicts, Deployments spread over distinct GPUs, FPGAs get binding conditions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
"""

CATS = (
    TEMPLATE
    + """
---
apiVersion: v1
kind: Pod
metadata: {name: pod-with-cats}
spec:
  resourceClaims:
  - {name: cat-0, resourceClaimTemplateName: one-gpu}
  - {name: cat-1, resourceClaimTemplateName: one-gpu}
  - {name: cat-2, resourceClaimTemplateName: one-gpu}
  - {name: cat-3, resourceClaimTemplateName: one-gpu}
  containers:
  - name: container0
    image: ubuntu:20.04
    command: ["sleep", "9999"]
    resources:
      claims: [{name: cat-0}, {name: cat-1}]
  - name: container1
    image: ubuntu:20.04
    command: ["sleep", "9999"]
    resources:
      claims: [{name: cat-2}, {name: cat-3}]
"""
)


def get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def claims_of(k, pod: dict) -> list[dict]:
    names = [s["resourceClaimName"] for s in pod["status"].get("resourceClaimStatuses", [])]
    return [get(k, "resourceclaim", n) for n in names]


def devices(claim: dict) -> list[tuple[str, str, str]]:
    return [(r["driver"], r["pool"], r["device"]) for r in claim["status"]["allocation"]["devices"]["results"]]


def wait_running(k, pod: str, timeout: str = "60s") -> dict:
    k("wait", f"--for=jsonpath={{.status.phase}}=Running", f"pod/{pod}", f"--timeout={timeout}")
    return get(k, "pod", pod)


def test_gpu_pod_from_template_runs(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k(
        "apply",
        "-f",
        "-",
        input=TEMPLATE
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: gpu-pod}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpu}]}}]
""",
    )

    p = wait_running(k, "gpu-pod")
    assert p["spec"]["nodeName"] in ("gpu-node-0", "gpu-node-1")
    claim_name = p["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = get(k, "resourceclaim", claim_name)
    assert claim["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [p["metadata"]["uid"]]
    # the node's prepared claims, as the kubelet PodResources API shows them
    res = json.loads(k("get", "--raw", f"/mockkube/v1/nodes/{p['spec']['nodeName']}/podresources").stdout)
    dyn = res["podResources"][0]["containers"][0]["dynamicResources"][0]
    assert dyn["claimName"] == claim_name
    assert dyn["claimResources"][0]["cdiDevices"][0]["name"].startswith("gpu.example.com/gpu=gpu-")
    events = k("get", "events", "--field-selector", "involvedObject.name=gpu-pod", "-o", "json").stdout
    assert "ResourceClaimPrepared" in events


def test_pod_with_cats_gets_four_distinct_prepared_devices(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=CATS)
    pod = wait_running(k, "pod-with-cats")
    claims = claims_of(k, pod)
    assert len(claims) == 4
    for c in claims:
        assert c["metadata"]["generateName"].startswith("pod-with-cats-cat-")
        assert c["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"].startswith("cat-")
        assert c["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
        assert [r["uid"] for r in c["status"]["reservedFor"]] == [pod["metadata"]["uid"]]
    devs = [d for c in claims for d in devices(c)]
    assert len(devs) == 4 and len(set(devs)) == 4
    assert {pool for _, pool, _ in devs} == {pod["spec"]["nodeName"]}
    events = k(
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=pod-with-cats,reason=ResourceClaimPrepared",
        "-o",
        "json",
    ).stdout
    assert len(json.loads(events)["items"]) == 4

    # deleting the pod unprepares its claims and deletes the generated ones
    k("delete", "pod", "pod-with-cats", "--wait=true", "--timeout=60s")
    for c in claims:
        k("wait", "--for=delete", f"resourceclaim/{c['metadata']['name']}", "--timeout=60s")
    unprepared = json.loads(
        k(
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=pod-with-cats,reason=ResourceClaimUnprepared",
            "-o",
            "json",
        ).stdout
    )
    assert len(unprepared["items"]) == 4


def test_too_many_gpus_stays_pending_with_failed_scheduling(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: greedy}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {deviceClassName: gpu.example.com, count: 500}
---
apiVersion: v1
kind: Pod
metadata: {name: greedy}
spec:
  resourceClaims: [{name: gpus, resourceClaimName: greedy}]
  containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpus}]}}]
""",
    )

    def failed():
        evs = get(k, "events", "--field-selector", "involvedObject.name=greedy,reason=FailedScheduling")["items"]
        return evs[0] if evs else None

    ev = until(failed, what="a FailedScheduling event")
    assert ev["type"] == "Warning"
    # v1.36 checks the claim limit (32 results) before searching: a scheduling error
    assert ev["message"] == (
        'running "DynamicResources" filter plugin: claim default/greedy: number of '
        "requested devices 500 exceeds the claim limit of 32"
    )
    pod = get(k, "pod", "greedy")
    assert pod["status"]["phase"] == "Pending" and "nodeName" not in pod["spec"]
    cond = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert cond["status"] == "False" and cond["reason"] == "SchedulerError"
    assert "allocation" not in get(k, "resourceclaim", "greedy").get("status", {})


def test_unhealthy_gpu_evicts_its_pod(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k(
        "apply",
        "-f",
        "-",
        input=TEMPLATE
        + """
---
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpu}]}}]
""",
    )
    pod = wait_running(k, "victim")
    ((driver, pool, device),) = devices(claims_of(k, pod)[0])
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mockkube",
            "driver",
            "health",
            driver,
            pool,
            device,
            "unhealthy",
            "--effect",
            "NoExecute",
            "--server",
            mockkube_fresh.url,
        ],
        check=True,
        capture_output=True,
    )
    slices = get(k, "resourceslices", "--field-selector", f"spec.nodeName={pool}")["items"]
    tainted = [d for s in slices for d in s["spec"].get("devices", []) if d["name"] == device]
    assert tainted and tainted[0]["taints"][0]["effect"] == "NoExecute"
    k("wait", "--for=delete", "pod/victim", "--timeout=60s")
    evicted = get(k, "events", "--field-selector", "involvedObject.name=victim")["items"]
    assert any("DeviceTaint" in e["reason"] or "Evict" in e["reason"] for e in evicted), [e["reason"] for e in evicted]


def test_deployment_of_three_gets_three_distinct_gpus(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k(
        "apply",
        "-f",
        "-",
        input=TEMPLATE
        + """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainers}
spec:
  replicas: 3
  selector: {matchLabels: {app: trainers}}
  template:
    metadata: {labels: {app: trainers}}
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
      containers: [{name: app, image: cuda:12, resources: {claims: [{name: gpu}]}}]
""",
    )
    k("rollout", "status", "deployment/trainers", "--timeout=90s")
    pods = get(k, "pods", "-l", "app=trainers")["items"]
    assert len(pods) == 3 and all(p["status"]["phase"] == "Running" for p in pods)
    devs = [d for p in pods for c in claims_of(k, p) for d in devices(c)]
    assert len(devs) == 3 and len(set(devs)) == 3
    dep = get(k, "deployment", "trainers")
    assert dep["status"]["readyReplicas"] == 3 and dep["status"]["availableReplicas"] == 3


def test_fpga_binding_conditions_are_set_by_the_driver_controller(mockkube_fresh):
    k = mockkube_fresh.kubectl
    fpga_slices = [s for s in get(k, "resourceslices")["items"] if s["spec"]["driver"] == "fpga.example.com"]
    assert fpga_slices
    dev = fpga_slices[0]["spec"]["devices"][0]
    assert dev["bindingConditions"] == ["fpga.example.com/attached"]
    assert dev["bindingFailureConditions"] == ["fpga.example.com/attach-failed"]
    assert dev["bindsToNode"] is True
    k(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: accel}
spec:
  devices:
    requests:
    - name: fpga
      exactly: {deviceClassName: fpga.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: fpga-user}
spec:
  resourceClaims: [{name: fpga, resourceClaimName: accel}]
  containers: [{name: app, image: bitstream:1, resources: {claims: [{name: fpga}]}}]
""",
    )

    def attached():
        claim = get(k, "resourceclaim", "accel")
        for d in claim.get("status", {}).get("devices", []):
            for c in d.get("conditions", []):
                if c["type"] == "fpga.example.com/attached" and c["status"] == "True":
                    return claim
        return None

    claim = until(attached, timeout=60, what="the attached binding condition")
    result = claim["status"]["allocation"]["devices"]["results"][0]
    assert result["driver"] == "fpga.example.com"
    assert result["bindingConditions"] == ["fpga.example.com/attached"]
    assert claim["status"]["allocation"]["nodeSelector"]  # bindsToNode pins the claim to one node
