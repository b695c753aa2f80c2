"""--feature-gates and --runtime-config end to end, with kubectl: a disabled feature's
field dropped on create and kept on update where in use, a resource of a disabled gate
not served, a DRA-backed extended resource with its gate on and off (the scheduler in a
process of its own too), and the example DRA driver's v1.36 gate set in one profile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockkube.testing.handle import Cluster
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

BARE = {"apiVersion": "mockkube.io/v1alpha1", "kind": "ClusterProfile", "name": "bare"}

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: %s}
spec:
  driver: gpu.example.com
  nodeName: node-a
  pool: {name: node-a, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    taints:
    - {key: example.com/maintenance, value: "true", effect: NoSchedule}
"""


def get(c, *args) -> dict:
    return json.loads(c.kubectl("get", *args, "-o", "json").stdout)


def taints(c, name: str) -> list:
    return get(c, "resourceslice", name)["spec"]["devices"][0].get("taints") or []


def test_field_of_a_disabled_feature_dropped_on_create_and_kept_on_update_when_in_use(tmp_path):
    db = f"sqlite:///{tmp_path / 'cluster.db'}"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with Cluster(BARE, db_url=db, workdir=str(tmp_path / "a")) as on:  # v1.36: DRADeviceTaints is on
        on.kubectl("apply", "-f", "-", input=SLICE % "in-use")
        assert taints(on, "in-use")
    # the same cluster restarted with the gate off
    with Cluster(BARE, db_url=db, workdir=str(tmp_path / "b"), feature_gates={"DRADeviceTaints": False}) as off:
        off.kubectl("apply", "-f", "-", input=SLICE % "fresh")
        assert taints(off, "fresh") == []  # dropped on create
        off.kubectl("label", "resourceslice", "in-use", "touched=yes")
        assert taints(off, "in-use")  # kept: the stored object uses the feature
        off.kubectl("apply", "-f", "-", input=SLICE % "fresh")  # an update adding them: still dropped
        assert taints(off, "fresh") == []
        metrics = off.kubectl("get", "--raw", "/metrics").stdout
        assert 'kubernetes_feature_enabled{name="DRADeviceTaints",stage="BETA"} 0.0' in metrics


def test_resource_of_a_disabled_gate_is_not_served(mockkube):
    names = mockkube.kubectl("api-resources", "-o", "name").stdout.split()
    assert "resourceslices.resource.k8s.io" in names and "devicetaintrules.resource.k8s.io" not in names
    p = mockkube.kubectl("get", "devicetaintrules", check=False)
    assert p.returncode != 0
    assert 'the server doesn\'t have a resource type "devicetaintrules"' in p.stderr


@pytest.mark.mockkube(
    profile=BARE, feature_gates={"DRADeviceTaintRules": True}, runtime_config={"resource.k8s.io/v1beta2": True}
)
def test_resource_served_once_its_gate_and_api_version_are_on(mockkube):
    rule = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maintenance"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "k", "effect": "NoSchedule"}},
    }
    mockkube.kubectl("apply", "-f", "-", input=json.dumps(rule))
    assert get(mockkube, "devicetaintrules", "maintenance")["spec"]["taint"]["key"] == "k"


EXTENDED = """
apiVersion: mockkube.io/v1alpha1
kind: ClusterProfile
name: extended
nodes:
- name: dra-node
  capacity: {cpu: "4", memory: 16Gi}
  drivers:
    gpu.example.com: {count: 2}
"""

CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example-gpu}
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: wants-gpu}
spec:
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    resources:
      limits: {example.com/gpu: 1}
"""


def _scheduled_condition(c) -> dict:
    conds = get(c, "pod", "wants-gpu").get("status", {}).get("conditions") or []
    return next((x for x in conds if x["type"] == "PodScheduled"), {})


def _judged_by_node_resources_fit_alone(c) -> None:
    c.kubectl("apply", "-f", "-", input=CLASS)
    assert "extendedResourceName" not in get(c, "deviceclass", "example-gpu")["spec"]  # dropped on create
    c.kubectl("apply", "-f", "-", input=POD)
    cond = until(lambda: _scheduled_condition(c).get("reason") == "Unschedulable" and _scheduled_condition(c))
    assert "Insufficient example.com/gpu" in cond["message"], cond
    assert not (get(c, "pod", "wants-gpu").get("status") or {}).get("extendedResourceClaimStatus")
    assert get(c, "resourceclaims")["items"] == []


@pytest.mark.parametrize(
    "mockkube",
    [{"profile": EXTENDED}, {"profile": EXTENDED, "feature_gates": {"DRAExtendedResource": False}}],
    ids=["DRAExtendedResource-on", "DRAExtendedResource-off"],
    indirect=True,
)
def test_extended_resource_with_its_gate_on_and_off(mockkube, request):
    if "off" in request.node.callspec.id:
        _judged_by_node_resources_fit_alone(mockkube)
        return
    mockkube.kubectl("apply", "-f", "-", input=CLASS)
    mockkube.kubectl("apply", "-f", "-", input=POD)
    mockkube.kubectl("wait", "--for=jsonpath={.status.phase}=Running", "pod/wants-gpu", "--timeout=60s")
    status = get(mockkube, "pod", "wants-gpu")["status"]
    assert status["extendedResourceClaimStatus"]["requestMappings"][0]["resourceName"] == "example.com/gpu"


def test_extended_resource_off_reaches_the_scheduler_process(tmp_path):
    """`mockkube serve` runs the scheduler as a process of its own: it gets the gates too."""
    profile = tmp_path / "p.yaml"
    profile.write_text(EXTENDED)
    with Cluster(str(profile), subprocess=True, feature_gates="DRAExtendedResource=false", workdir=str(tmp_path)) as c:
        _judged_by_node_resources_fit_alone(c)


# the example DRA driver's kind configuration for v1.36.1
DRIVER_CI = """
apiVersion: mockkube.io/v1alpha1
kind: ClusterProfile
name: dra-example-driver-ci
featureGates:
  DRAAdminAccess: true
  DRAWorkloadResourceClaims: true
  GangScheduling: true
  GenericWorkload: true
  DRAExtendedResource: true
  DRADeviceBindingConditions: true
  DRANodeAllocatableResources: true
  DRAConsumableCapacity: true
runtimeConfig:
  resource.k8s.io/v1beta1: true
  scheduling.k8s.io/v1alpha2: true
nodes:
- name: worker
  drivers:
    gpu.example.com: {count: 2}
"""


@pytest.mark.mockkube(profile=DRIVER_CI)
def test_the_example_dra_drivers_v1_36_gate_set_in_one_profile(mockkube):
    metrics = mockkube.kubectl("get", "--raw", "/metrics").stdout
    for gate, stage in (
        ("DRAAdminAccess", ""),
        ("DRAWorkloadResourceClaims", "ALPHA"),
        ("GangScheduling", "ALPHA"),
        ("GenericWorkload", "ALPHA"),
        ("DRAExtendedResource", "BETA"),
        ("DRADeviceBindingConditions", "BETA"),
        ("DRANodeAllocatableResources", "ALPHA"),
        ("DRAConsumableCapacity", "BETA"),
    ):
        assert f'kubernetes_feature_enabled{{name="{gate}",stage="{stage}"}} 1.0' in metrics, gate
    assert 'kubernetes_feature_enabled{name="DRAListTypeAttributes",stage="ALPHA"} 0.0' in metrics
    assert get(mockkube, "nodes")["items"][0]["metadata"]["name"] == "worker"
    # the runtime-config: the older DRA version and the workload API are served
    versions = mockkube.kubectl("api-versions").stdout.split()
    assert {"resource.k8s.io/v1", "resource.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha2"} <= set(versions)
    assert "resource.k8s.io/v1beta2" not in versions  # not asked for
    names = mockkube.kubectl("api-resources", "--api-group=scheduling.k8s.io", "-o", "name").stdout.split()
    assert {"podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io"} <= set(names)


def _serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mockkube", "serve", "--port", "0", *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--feature-gates", "DRAShiny=true"],
            'mockkube: invalid argument "DRAShiny=true" for "--feature-gates" flag: unrecognized feature gate: DRAShiny',
        ),
        (
            ["--feature-gates", "DynamicResourceAllocation=false"],
            'mockkube: invalid argument "DynamicResourceAllocation=false" for "--feature-gates" flag: cannot set '
            "feature gate DynamicResourceAllocation to false, feature is locked to true",
        ),
        (
            ["--feature-gates", "GangScheduling=true"],
            'mockkube: invalid argument "GangScheduling=true" for "--feature-gates" flag: GangScheduling is '
            "enabled, but depends on features that are disabled: [GenericWorkload]",
        ),
        (
            ["--runtime-config", "resource.k8s.io/v7=true"],
            "mockkube: --runtime-config: group version resource.k8s.io/v7 that has not been registered",
        ),
    ],
)
def test_start_up_errors_are_one_line(args, message):
    p = _serve(*args)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [message]


def test_serve_help_lists_the_gates_and_their_defaults():
    p = subprocess.run(
        [sys.executable, "-m", "mockkube", "serve", "--help"], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0
    text = " ".join(p.stdout.split())
    assert "DRANodeAllocatableResources=true|false (ALPHA - default=false)" in text
    assert "DRADeviceTaintRules=true|false (BETA - default=false)" in text
    assert "--runtime-config" in text
