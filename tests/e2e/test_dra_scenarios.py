"""DRA scenarios on the demo cluster, checked with kubectl against what a v1.36 cluster
shows: KEP-5004 extended resources run (the kubelet does not reject the DRA-backed
resource), claims get allocationTimestamp, FailedScheduling carries the DynamicResources
PostFilter reason, firstAvailable results name the subrequest."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

EXTENDED = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-ext}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com" && !("parent" in device.attributes["gpu.example.com"])'}
---
apiVersion: v1
kind: Pod
metadata: {name: ext}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      limits: {example.com/gpu: 1}
"""

FIRST_AVAILABLE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fa}
spec:
  devices:
    requests:
    - name: req
      firstAvailable:
      - name: impossible
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "nope"'}}]
      - name: whole
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: '!("parent" in device.attributes["gpu.example.com"])'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: fa}
spec:
  resourceClaims: [{name: c, resourceClaimName: fa}]
  containers:
  - name: c
    image: busybox
    resources: {claims: [{name: c}]}
"""

TOO_BIG = """
apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  nodeSelector: {kubernetes.io/hostname: cpu-node}
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "100"}}
"""


def get(k, *args) -> dict:
    return json.loads(k("get", *args, "-o", "json").stdout)


def wait_running(k, pod: str) -> dict:
    k("wait", "--for=jsonpath={.status.phase}=Running", f"pod/{pod}", "--timeout=60s")
    return get(k, "pod", pod)


def test_extended_resource_backed_by_dra_runs(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=EXTENDED)
    pod = wait_running(k, "ext")
    status = pod["status"]["extendedResourceClaimStatus"]
    assert status["requestMappings"] == [
        {"containerName": "c", "requestName": "container-0-request-0", "resourceName": "example.com/gpu"}
    ]
    claim = get(k, "resourceclaim", status["resourceClaimName"])
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
    assert claim["status"]["reservedFor"][0]["name"] == "ext"
    assert claim["status"]["allocation"]["allocationTimestamp"]


def test_first_available_result_names_the_subrequest(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=FIRST_AVAILABLE)
    wait_running(k, "fa")
    alloc = get(k, "resourceclaim", "fa")["status"]["allocation"]
    assert [r["request"] for r in alloc["devices"]["results"]] == ["req/whole"]
    assert alloc["allocationTimestamp"]


def test_failed_scheduling_of_a_pod_without_claims(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=TOO_BIG)
    k("wait", "--for=condition=PodScheduled=False", "pod/too-big", "--timeout=30s")
    out = k("describe", "pod", "too-big").stdout
    assert (
        "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 1 No preemption victims found "
        "for incoming pod, 3 Preemption is not helpful for scheduling."
    ) in " ".join(out.split())
