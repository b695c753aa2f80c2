"""The overcommit KEP-5517 exists to prevent, with real kubectl: a node with 16 CPUs, one
pod takes 12 of them through a ResourceClaim on the CPU driver, a second pod asks for 8
CPUs in its container requests. Each alone fits (12 <= 16, 8 <= 16), so two separate
ledgers would place both (20 CPUs on a 16-CPU node); with one ledger the second stays
Pending with "Insufficient cpu" and runs once the first is deleted. Also: the pod's
nodeAllocatableResourceClaimStatuses, the refused in-place resize, and what
``kubectl describe node`` shows."""

from __future__ import annotations

import json

import pytest

from mockkube.testing.cluster import ThreadedCluster

pytestmark = pytest.mark.e2e

PROFILE = """
apiVersion: mockkube.io/v1alpha1
kind: ClusterProfile
name: sixteen-cpus
featureGates: {DRANodeAllocatableResources: true}   # KEP-5517: alpha, off by default in v1.36
nodes:
- name: cpu16
  capacity: {cpu: "16", memory: 64Gi}
  drivers:
    cpu.example.com: {shape: cores, sockets: 1, coresPerSocket: 8, threadsPerCore: 2}
"""

EXCLUSIVE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: twelve-cpus}
spec:
  devices:
    requests:
    - name: cores
      exactly: {deviceClassName: cpu.example.com, count: 6}   # 6 cores x 2 threads
---
apiVersion: v1
kind: Pod
metadata: {name: exclusive}
spec:
  resourceClaims: [{name: cpus, resourceClaimName: twelve-cpus}]
  containers:
  - name: app
    image: busybox
    resources:
      requests: {cpu: 100m}
      claims: [{name: cpus}]
"""

SHARED = """
apiVersion: v1
kind: Pod
metadata: {name: shared}
spec:
  containers:
  - name: app
    image: busybox
    resources: {requests: {cpu: "8"}}
"""

PINNED = """
apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeName: cpu16
  containers:
  - name: app
    image: busybox
    resources: {requests: {cpu: "8"}}
"""


@pytest.fixture
def sixteen(tmp_path):
    (tmp_path / "profile.yaml").write_text(PROFILE)
    c = ThreadedCluster(workdir=str(tmp_path), cluster=str(tmp_path / "profile.yaml")).start()
    try:
        yield c
    finally:
        c.stop()


def test_claimed_cpus_and_requested_cpus_share_one_ledger(sixteen):
    k = sixteen.kubectl
    k("apply", "-f", "-", input=EXCLUSIVE)
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/exclusive", "--timeout=60s")
    statuses = json.loads(
        k("get", "pod", "exclusive", "-o", "jsonpath={.status.nodeAllocatableResourceClaimStatuses}").stdout
    )
    assert statuses == [{"containers": ["app"], "resourceClaimName": "twelve-cpus", "resources": {"cpu": "12"}}]

    k("apply", "-f", "-", input=SHARED)
    k("wait", "--for=condition=PodScheduled=False", "pod/shared", "--timeout=60s")
    assert k("get", "pod", "shared", "-o", "jsonpath={.spec.nodeName}").stdout == ""
    described = " ".join(k("describe", "pod", "shared").stdout.split())
    assert "Warning FailedScheduling" in described
    assert (
        "default-scheduler 0/1 nodes are available: 1 Insufficient cpu. no new claims to "
        "deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    ) in described

    # the kubelet admits against the same demand: a pod bound to the node directly is refused
    k("apply", "-f", "-", input=PINNED)
    k("wait", "--for=jsonpath={.status.phase}=Failed", "pod/pinned", "--timeout=60s")
    pinned = json.loads(k("get", "pod", "pinned", "-o", "json").stdout)["status"]
    assert (pinned["reason"], pinned["message"]) == (
        "OutOfcpu",
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 8000, used: 12100, capacity: 16000",
    )

    # KEP-5517 alpha: the pod holding DRA cpus cannot be resized in place
    resize = k(
        "patch",
        "pod",
        "exclusive",
        "--subresource",
        "resize",
        "-p",
        '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}',
        check=False,
    )
    assert resize.returncode != 0
    assert resize.stderr.strip() == (
        'The Pod "exclusive" is invalid: spec: Forbidden: pods with node allocatable resource claims cannot be resized'
    )

    k("delete", "pod", "exclusive")
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/shared", "--timeout=60s")
    assert k("get", "pod", "shared", "-o", "jsonpath={.spec.nodeName}").stdout == "cpu16"


def test_describe_node_allocated_resources_come_from_the_pod_spec(sixteen):
    """kubectl (v1.35 here, and v1.36's describe too) computes "Allocated resources" on the
    client from PodRequests without the DRA option, so a claim's cpus do not appear there,
    exactly as on a real v1.36 cluster; the scheduler still counts them (previous test)."""
    k = sixteen.kubectl
    k("apply", "-f", "-", input=EXCLUSIVE)
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/exclusive", "--timeout=60s")
    out = k("describe", "node", "cpu16").stdout
    lines = [" ".join(line.split()) for line in out.splitlines()]
    [row] = [line for line in lines if line.startswith("default exclusive ")]
    assert row.startswith("default exclusive 100m (0%) 0 (0%) 0 (0%) 0 (0%)")
    allocated = lines[lines.index("Allocated resources:") + 4]
    assert allocated == "cpu 100m (0%) 0 (0%)"


def test_kubectl_resize_of_an_ordinary_pod_still_works(sixteen):
    k = sixteen.kubectl
    k("apply", "-f", "-", input=SHARED)
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/shared", "--timeout=60s")
    k(
        "patch",
        "pod",
        "shared",
        "--subresource",
        "resize",
        "-p",
        '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"4"}}}]}}',
    )
    assert k("get", "pod", "shared", "-o", "jsonpath={.spec.containers[0].resources.requests.cpu}").stdout == "4"
