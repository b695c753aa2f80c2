"""An e2e suite on mockkube's pytest plugin (docs/testing.md): copy it, run `pytest -n auto`."""

from datetime import timedelta

import pytest

CLAIM_TEMPLATE = """
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

POD = """
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers:
  - name: main
    image: registry.example/trainer:1
    resources: {claims: [{name: gpu}]}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
"""


def test_a_pod_gets_a_gpu(mockkube, mockkube_namespace):
    ns = mockkube_namespace
    mockkube.kubectl("apply", "-n", ns, "-f", "-", input=CLAIM_TEMPLATE + "---" + POD)
    mockkube.wait_for_pod_phase("trainer", "Running", ns)
    claim = mockkube.get("pod", "trainer", ns)["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    allocated = mockkube.wait_for_claim_allocated(claim, ns)
    assert allocated["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"


def test_the_python_client_sees_the_same_cluster(mockkube, mockkube_api_client):
    from kubernetes import client

    nodes = client.CoreV1Api(mockkube_api_client).list_node().items
    assert {n.metadata.name for n in nodes} >= {"gpu-node-0", "gpu-node-1"}


def test_nothing_leaks_from_other_tests(mockkube):
    # every test starts from the cluster's initial state: no pods, no claims
    assert mockkube.kubectl("get", "pods", "-A", "-o", "name").stdout == ""
    assert mockkube.kubectl("get", "resourceclaims", "-A", "-o", "name").stdout == ""


ONE_SMALL_NODE = """
nodes:
- name: small
  capacity: {cpu: "2", memory: 4Gi, pods: "10"}
  drivers:
    gpu.example.com: {count: 1}
"""


@pytest.mark.mockkube(profile=ONE_SMALL_NODE)
def test_a_cluster_of_my_own(mockkube):
    assert mockkube.kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/small"]


@pytest.mark.mockkube(profile=ONE_SMALL_NODE, frozen_clock=True)
def test_time_moves_only_when_told(mockkube):
    before = mockkube.machinery.clock.now()
    assert mockkube.machinery.clock.now() == before
    assert mockkube.machinery.clock.advance(timedelta(minutes=10)) == before + timedelta(minutes=10)
