"""The real kubectl v1.35.2 against a served mockkube: the API-core flows users rely on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mockkube.testing import binaries
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e


@pytest.fixture
def kubectl(mockkube_empty):
    """These flows are about the API server alone: no simulated nodes or drivers."""
    return mockkube_empty.kubectl


MANIFESTS = Path(__file__).parent / "manifests"
CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: lone-claim
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: resource.example.com
"""


def test_api_resources_lists_dra_kinds(kubectl):
    out = kubectl("api-resources").stdout
    for plural in (
        "deviceclasses",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceslices",
        "pods",
        "leases",
        "deployments",
    ):
        assert plural in out


def test_version_says_mockkube(kubectl):
    out = json.loads(kubectl("version", "-o", "json").stdout)
    assert out["serverVersion"]["gitVersion"].startswith("v1.36.")
    assert "mockkube" in out["serverVersion"]["gitVersion"]


def test_get_on_empty_server(kubectl):
    p = kubectl("get", "deviceclasses")
    assert "No resources found" in p.stderr


def test_create_commands_send_protobuf(kubectl):
    kubectl("create", "configmap", "pb-cm", "--from-literal=a=b")
    kubectl("create", "secret", "generic", "pb-secret", "--from-literal=pw=s3cret")
    kubectl("create", "namespace", "pb-ns")
    cmj = json.loads(kubectl("get", "configmap", "pb-cm", "-o", "json").stdout)
    assert cmj["data"] == {"a": "b"}
    sec = json.loads(kubectl("get", "secret", "pb-secret", "-o", "json").stdout)
    assert sec["data"] == {"pw": "czNjcmV0"} and sec["type"] == "Opaque"
    ns = json.loads(kubectl("get", "namespace", "pb-ns", "-o", "json").stdout)
    assert ns["status"]["phase"] == "Active"
    p = kubectl("create", "configmap", "pb-cm", "--from-literal=a=b", check=False)
    assert p.returncode != 0 and 'configmaps "pb-cm" already exists' in p.stderr


# A DRA example that stands alone (its own class, slice and driver name) on this empty
# cluster; the quickstart's runnable version is manifests/dra-cats.yaml (test_explain.py).
STANDALONE_DRA = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: resource.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "resource-driver.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: large-black-cat-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: resource.example.com
          selectors:
          - cel:
              expression: |-
                device.attributes["resource-driver.example.com"].color == "black" &&
                device.attributes["resource-driver.example.com"].size == "large"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: worker-1-slice
spec:
  driver: resource-driver.example.com
  nodeName: worker-1
  pool:
    name: worker-1
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: large-black-cat
    attributes:
      color:
        string: black
      size:
        string: large
    capacity:
      memory:
        value: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: pod-with-cats
spec:
  containers:
  - name: container0
    image: ubuntu:20.04
    command: ["sleep", "9999"]
    resources:
      claims:
      - name: cat-0
  resourceClaims:
  - name: cat-0
    resourceClaimTemplateName: large-black-cat-claim-template
"""


def test_apply_dra_examples_get_yaml_and_tables(kubectl):
    out = kubectl("apply", "-f", "-", input=STANDALONE_DRA).stdout
    assert "deviceclass.resource.k8s.io/resource.example.com created" in out
    assert "resourceslice.resource.k8s.io/worker-1-slice created" in out
    assert "pod/pod-with-cats created" in out
    again = kubectl("apply", "-f", "-", input=STANDALONE_DRA).stdout
    assert "deviceclass.resource.k8s.io/resource.example.com unchanged" in again
    slices = kubectl("get", "resourceslices").stdout.splitlines()
    assert slices[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1].split()[:4] == ["worker-1-slice", "worker-1", "resource-driver.example.com", "worker-1"]
    pods = kubectl("get", "pods").stdout.splitlines()
    assert pods[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[1].split()[:4] == ["pod-with-cats", "0/1", "Pending", "0"]
    y = kubectl("get", "deviceclass", "resource.example.com", "-o", "yaml").stdout
    assert "kind: DeviceClass" in y and "device.driver ==" in y
    kubectl("create", "-f", "-", input=CLAIM)
    claims = kubectl("get", "resourceclaims").stdout.splitlines()
    assert claims[0].split() == ["NAME", "STATE", "AGE"]
    assert claims[1].split()[:2] == ["lone-claim", "pending"]


def test_patch_label_annotate(kubectl):
    kubectl("create", "configmap", "pt", "--from-literal=a=1")
    kubectl("patch", "configmap", "pt", "--type=merge", "-p", '{"data":{"b":"2"}}')
    kubectl("patch", "configmap", "pt", "--type=json", "-p", '[{"op":"add","path":"/data/c","value":"3"}]')
    kubectl("patch", "configmap", "pt", "-p", '{"data":{"a":null}}')  # strategic (default)
    kubectl("label", "configmap", "pt", "team=dra")
    kubectl("annotate", "configmap", "pt", "note=hello")
    obj = json.loads(kubectl("get", "configmap", "pt", "-o", "json").stdout)
    assert obj["data"] == {"b": "2", "c": "3"}
    assert obj["metadata"]["labels"] == {"team": "dra"}
    assert obj["metadata"]["annotations"]["note"] == "hello"
    shown = kubectl("get", "configmap", "pt", "--show-labels").stdout
    assert "team=dra" in shown


def test_delete_and_wait_for_delete(kubectl):
    kubectl("create", "configmap", "gone", "--from-literal=a=1")
    out = kubectl("delete", "configmap", "gone").stdout
    assert 'configmap "gone" deleted' in out
    kubectl("create", "configmap", "held", "--from-literal=a=1")
    kubectl("patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":["example.com/x"]}}')
    kubectl("delete", "configmap", "held", "--wait=false")
    waiter = subprocess.Popen(
        [binaries.kubectl(), "wait", "--for=delete", "configmap/held", "--timeout=30s"],
        env=kubectl.__self__.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cluster = kubectl.__self__
    until(
        lambda: cluster.call(lambda: cluster.server.store.hub.watcher_count("core/configmaps")) > 0
    )  # the waiter watches
    kubectl("patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    out, err = waiter.communicate(timeout=40)
    assert waiter.returncode == 0, err
    assert "configmap/held condition met" in out


def test_delete_dry_run_server(kubectl):
    kubectl("create", "configmap", "dry", "--from-literal=a=1")
    kubectl("delete", "configmap", "dry", "--dry-run=server")
    assert kubectl("get", "configmap", "dry").returncode == 0


def test_get_watch_sees_a_later_change(kubectl):
    kubectl("create", "configmap", "watched", "--from-literal=a=1")
    proc = subprocess.Popen(
        [binaries.kubectl(), "get", "configmap", "watched", "-w", "-o", "name", "--output-watch-events"],
        env=kubectl.__self__.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert "configmap/watched" in first
        kubectl("label", "configmap", "watched", "seen=yes")
        second = proc.stdout.readline()  # a second line only comes with a change
        assert second.strip() == "configmap/watched"
    finally:
        proc.kill()
        proc.wait()


def test_server_side_apply_twice_with_conflict(kubectl, tmp_path):
    f = tmp_path / "cm.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: v1\n")
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", str(f)).stdout
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", str(f)).stdout
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: v2\n")
    p = kubectl("apply", "--server-side", "--field-manager=other", "-f", str(f), check=False)
    assert p.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.k' in p.stderr
    kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", str(f))
    obj = json.loads(kubectl("get", "configmap", "ssa", "-o", "json", "--show-managed-fields").stdout)
    assert obj["data"]["k"] == "v2"
    assert {m["manager"] for m in obj["metadata"]["managedFields"]} >= {"other"}


def test_explain_resourceclaim_requests(kubectl):
    out = kubectl("explain", "resourceclaim.spec.devices.requests").stdout
    assert "KIND:       ResourceClaim" in out and "exactly" in out and "firstAvailable" in out


def test_describe_pod_and_events(kubectl):
    kubectl("run", "described", "--image=busybox", "--restart=Never")
    out = kubectl("describe", "pod", "described").stdout
    assert "Name:" in out and "described" in out and "busybox" in out


def test_replace_and_stale_update(kubectl, tmp_path):
    kubectl("create", "configmap", "rep", "--from-literal=a=1")
    obj = json.loads(kubectl("get", "configmap", "rep", "-o", "json").stdout)
    obj["data"]["a"] = "2"
    f = tmp_path / "rep.json"
    f.write_text(json.dumps(obj))
    kubectl("replace", "-f", str(f))
    obj["data"]["a"] = "3"
    f.write_text(json.dumps(obj))  # stale resourceVersion now
    p = kubectl("replace", "-f", str(f), check=False)
    assert p.returncode != 0 and "the object has been modified" in p.stderr


def test_chunked_list(kubectl):
    for i in range(5):
        kubectl("create", "configmap", f"chunk{i}", "--from-literal=a=1")
    out = kubectl("get", "configmaps", "--chunk-size=2", "-o", "name").stdout.split()
    assert [n for n in out if n.startswith("configmap/chunk")] == [f"configmap/chunk{i}" for i in range(5)]
