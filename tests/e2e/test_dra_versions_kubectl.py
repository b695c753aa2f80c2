"""resource.k8s.io/v1beta1 with the real kubectl and the official Python client (a driver
built with an older client library): slices written at v1beta1 read back as v1 and the
reverse, a claim written at v1beta1 allocated by the scheduler and prepared by the kubelet,
and the typed ``ResourceV1beta1Api`` publishing, listing and watching slices unchanged."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config, watch

from mockkube.testing.waiting import until

# resource.k8s.io v1beta1 and v1beta2 are off by default in v1.36, as upstream
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.mockkube(runtime_config={"resource.k8s.io/v1beta1": True, "resource.k8s.io/v1beta2": True}),
]

SLICE_V1BETA1 = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: old-slice}
spec:
  driver: old.example.com
  nodeName: kind-worker
  pool: {name: kind-worker, generation: 1, resourceSliceCount: 1}
  devices:
  - name: dev-0
    basic:
      attributes:
        model: {string: X1}
      capacity:
        memory: {value: 8Gi}
"""

SLICE_V1 = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: new-slice}
spec:
  driver: new.example.com
  nodeName: kind-worker
  pool: {name: kind-worker, generation: 1, resourceSliceCount: 1}
  devices:
  - name: dev-0
    attributes:
      model: {string: X2}
"""

CLAIM_AND_POD = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: old-claim}
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.example.com
---
apiVersion: v1
kind: Pod
metadata: {name: old-claim-pod}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimName: old-claim}
  containers:
  - name: c
    image: busybox
    command: ["sleep", "3600"]
    resources:
      claims: [{name: gpu}]
"""


def _json(c, *args: str) -> dict:
    return json.loads(c.kubectl(*args, "-o", "json").stdout)


def test_slice_at_v1beta1_and_v1_with_kubectl(mockkube):
    c = mockkube
    c.kubectl("apply", "-f", "-", input=SLICE_V1BETA1)
    v1 = _json(c, "get", "resourceslice", "old-slice")  # the preferred version
    assert v1["apiVersion"] == "resource.k8s.io/v1"
    assert v1["spec"]["devices"] == [
        {"name": "dev-0", "attributes": {"model": {"string": "X1"}}, "capacity": {"memory": {"value": "8Gi"}}}
    ]
    b1 = _json(c, "get", "resourceslices.v1beta1.resource.k8s.io", "old-slice")
    assert b1["apiVersion"] == "resource.k8s.io/v1beta1"
    assert b1["spec"]["devices"][0]["basic"]["attributes"] == {"model": {"string": "X1"}}
    # and the reverse: written as v1, read at v1beta1 in the basic wrapper
    c.kubectl("create", "-f", "-", input=SLICE_V1)
    b1 = _json(c, "get", "resourceslices.v1beta1.resource.k8s.io", "new-slice")
    assert b1["spec"]["devices"] == [{"name": "dev-0", "basic": {"attributes": {"model": {"string": "X2"}}}}]
    # kubectl explain reads v1beta1's OpenAPI document
    out = c.kubectl("explain", "resourceslices.spec.devices.basic", "--api-version=resource.k8s.io/v1beta1").stdout
    assert "BasicDevice" in out and "attributes" in out
    # the table and a field selector at v1beta1
    out = c.kubectl(
        "get", "resourceslices.v1beta1.resource.k8s.io", "--field-selector=spec.driver=old.example.com"
    ).stdout
    assert out.split("\n")[0].split()[:3] == ["NAME", "NODE", "DRIVER"]
    assert "old-slice" in out and "new-slice" not in out
    # kubectl apply again at v1beta1 (client-side apply patches through v1beta1) changes the device
    c.kubectl("apply", "-f", "-", input=SLICE_V1BETA1.replace("X1", "X9"))
    assert _json(c, "get", "resourceslice", "old-slice")["spec"]["devices"][0]["attributes"]["model"] == {
        "string": "X9"
    }
    # server-side apply at v1beta1: the devices belong to kubectl's client-side apply (as v1beta1)
    p = c.kubectl("apply", "--server-side", "--field-manager=old-driver", "-f", "-", input=SLICE_V1BETA1, check=False)
    assert p.returncode == 1
    assert 'conflict with "kubectl-client-side-apply" using resource.k8s.io/v1beta1: .spec.devices' in p.stderr
    c.kubectl(
        "apply", "--server-side", "--force-conflicts", "--field-manager=old-driver", "-f", "-", input=SLICE_V1BETA1
    )
    got = _json(c, "get", "resourceslices.v1beta1.resource.k8s.io", "old-slice", "--show-managed-fields")
    managers = {(m["manager"], m["apiVersion"]) for m in got["metadata"]["managedFields"]}
    assert ("old-driver", "resource.k8s.io/v1beta1") in managers
    assert got["spec"]["devices"][0]["basic"]["attributes"]["model"] == {"string": "X1"}


def test_claim_written_at_v1beta1_is_allocated(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=CLAIM_AND_POD)
    c.kubectl("wait", "-n", ns, "--for=jsonpath={.status.phase}=Running", "pod/old-claim-pod", "--timeout=60s")
    b1 = _json(c, "get", "-n", ns, "resourceclaims.v1beta1.resource.k8s.io", "old-claim")
    assert b1["apiVersion"] == "resource.k8s.io/v1beta1"
    assert b1["spec"]["devices"]["requests"] == [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    ]
    (result,) = b1["status"]["allocation"]["devices"]["results"]
    assert result["driver"] == "gpu.example.com" and result["request"] == "gpu"
    assert [r["name"] for r in b1["status"]["reservedFor"]] == ["old-claim-pod"]
    v1 = _json(c, "get", "-n", ns, "resourceclaim", "old-claim")
    assert v1["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    assert v1["status"] == b1["status"]


@pytest.fixture
def v1beta1_api(mockkube):
    api_client = config.new_client_from_config(config_file=mockkube.kubeconfig)
    yield client.ResourceV1beta1Api(api_client), client.ResourceV1Api(api_client)
    api_client.close()


def test_python_client_publishes_slices_at_v1beta1(v1beta1_api):
    """What a driver built on an older client does: typed v1beta1 models, create, list with
    a field selector, update its pool generation, watch."""
    b1, v1 = v1beta1_api
    body = client.V1beta1ResourceSlice(
        metadata=client.V1ObjectMeta(name="py-old"),
        spec=client.V1beta1ResourceSliceSpec(
            driver="py-old.example.com",
            node_name="kind-worker",
            pool=client.V1beta1ResourcePool(name="kind-worker", generation=1, resource_slice_count=1),
            devices=[
                client.V1beta1Device(
                    name="gpu-0",
                    basic=client.V1beta1BasicDevice(
                        attributes={"model": client.V1beta1DeviceAttribute(string="A10")},
                        capacity={"memory": client.V1beta1DeviceCapacity(value="24Gi")},
                    ),
                )
            ],
        ),
    )
    created = b1.create_resource_slice(body)
    assert created.spec.devices[0].basic.attributes["model"].string == "A10"
    lst = b1.list_resource_slice(field_selector="spec.driver=py-old.example.com")
    assert [s.metadata.name for s in lst.items] == ["py-old"]
    rv = lst.metadata.resource_version
    got = b1.read_resource_slice("py-old")
    got.spec.pool.generation = 2
    got.spec.devices[0].basic.attributes["model"] = client.V1beta1DeviceAttribute(string="A10G")
    b1.replace_resource_slice("py-old", got)
    w = watch.Watch()
    events = []
    for ev in w.stream(b1.list_resource_slice, resource_version=rv, timeout_seconds=5):
        events.append((ev["type"], ev["object"].spec.pool.generation, ev["object"].spec.devices[0].basic))
        w.stop()
    assert events[0][:2] == ("MODIFIED", 2)
    assert events[0][2].attributes["model"].string == "A10G"
    now = v1.read_resource_slice("py-old")
    assert now.spec.devices[0].attributes["model"].string == "A10G"
    assert now.spec.devices[0].capacity["memory"].value == "24Gi"
    # the driver's own cleanup: delete by field selector at v1beta1
    b1.delete_collection_resource_slice(field_selector="spec.driver=py-old.example.com")
    until(lambda: not v1.list_resource_slice(field_selector="spec.driver=py-old.example.com").items, 10)
