"""Kubelet plugins over gRPC: the simulated kubelets register DRA drivers' kubelet plugins
from their plugins_registry directories and prepare claims through them, as on a node.
Driven with the real kubectl; the drivers run as processes (``mockkube driver run``, or
the profile's ``outOfProcess`` switch) or, where the test steers them, from a thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from mockkube.kubelet import cluster_of
from mockkube.testing.cluster import ThreadedCluster
from mockkube.testing.kubeletplugin import ThreadedPlugin
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

PROFILE = """
apiVersion: mockkube.io/v1alpha1
kind: ClusterProfile
name: plugins
kubelet: {pluginWipingDelay: 1s}
# device-health taints are DeviceTaintRules: beta, off by default in v1.36
featureGates: {DRADeviceTaintRules: true}
runtimeConfig: {resource.k8s.io/v1beta2: true}
nodes:
- name: oop
  drivers: {gpu.example.com: {count: 2}}
- name: ext
  count: 4
drivers:
  gpu.example.com: {outOfProcess: true}
"""


def pod_yaml(name: str, node: str) -> str:
    return f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: gpu.example.com}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  nodeSelector: {{kubernetes.io/hostname: {node}}}
  resourceClaims:
  - {{name: gpu, resourceClaimName: {name}}}
  containers:
  - name: app
    image: busybox
    command: ["sleep", "9999"]
    resources:
      claims: [{{name: gpu}}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    d = tmp_path_factory.mktemp("plugins")
    (d / "profile.yaml").write_text(PROFILE)
    c = ThreadedCluster(workdir=str(d), cluster=str(d / "profile.yaml")).start()
    yield c
    c.stop()


def get(c, *args) -> dict:
    p = c.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(p.stdout) if p.returncode == 0 else {}


def on_cluster(c, fn, *args):
    """Run ``fn`` where the simulated cluster's components live."""
    return c.call(lambda: c.server.on_cluster(fn, *args))


def dirs(c, node: str) -> dict:
    return on_cluster(c, lambda: cluster_of(c.server).plugin_dirs(node))


def slices(c, node: str) -> list[dict]:
    return [s for s in get(c, "resourceslices")["items"] if s["spec"].get("nodeName") == node]


def phase(c, name: str) -> str:
    return (get(c, "pod", name).get("status") or {}).get("phase", "")


def events(c, name: str, reason: str) -> list[dict]:
    return get(c, "events", "--field-selector", f"involvedObject.name={name},reason={reason}")["items"]


def run_driver(c, node: str, *extra: str) -> subprocess.Popen:
    d = dirs(c, node)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkube",
            "driver",
            "run",
            "gpu.example.com",
            "--node",
            node,
            "--registry",
            d["registry"],
            "--plugins",
            d["plugins"],
            "--kubeconfig",
            c.kubeconfig,
            "--config",
            '{"count": 2}',
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_profile_switch_runs_the_builtin_driver_out_of_process(cluster):
    c = cluster
    until(lambda: "gpu.example.com" in dirs(c, "oop")["registered"], what="plugin registered")
    until(lambda: len(slices(c, "oop")) == 1, what="slices published by the plugin process")
    assert slices(c, "oop")[0]["metadata"]["ownerReferences"][0]["name"] == "oop"
    c.kubectl("apply", "-f", "-", input=pod_yaml("flow", "oop"))
    until(lambda: phase(c, "flow") == "Running", what="pod running")
    prepared = events(c, "flow", "ResourceClaimPrepared")
    assert "gpu.example.com/gpu=gpu-" in prepared[0]["message"]
    c.kubectl("delete", "pod", "flow", "--wait=true")
    until(lambda: events(c, "flow", "ResourceClaimUnprepared"), what="unprepared")
    until(lambda: not (get(c, "resourceclaim", "flow").get("status") or {}).get("reservedFor"), what="claim released")
    c.kubectl("delete", "resourceclaim", "flow")


def test_plugin_crash_restart_and_socket_removal(cluster):
    c = cluster
    proc = run_driver(c, "ext-0")
    try:
        until(lambda: "gpu.example.com" in dirs(c, "ext-0")["registered"], what="registered")
        until(lambda: slices(c, "ext-0"), what="slices published")
        c.kubectl("apply", "-f", "-", input=pod_yaml("crash", "ext-0"))
        until(lambda: phase(c, "crash") == "Running", what="pod running through the plugin process")
        # a crash leaves the sockets behind: the kubelet sees the connection fail and wipes
        # the driver's slices after the wiping delay
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        until(lambda: not slices(c, "ext-0"), what="slices wiped after the plugin crashed")
        # the restarted plugin replaces its stale sockets, registers again, republishes
        proc = run_driver(c, "ext-0")
        until(
            lambda: "gpu.example.com" in dirs(c, "ext-0")["registered"] and slices(c, "ext-0"),
            what="registered again after the restart",
        )
        # the registration socket removed: deregistered, slices wiped after the delay
        os.unlink(Path(dirs(c, "ext-0")["registry"]) / "gpu.example.com-reg.sock")
        until(lambda: "gpu.example.com" not in dirs(c, "ext-0")["registered"], what="deregistered")
        until(lambda: not slices(c, "ext-0"), what="slices wiped after the socket went away")
    finally:
        proc.terminate()
        proc.wait(10)
        c.kubectl("delete", "pod", "crash", "--wait=false", check=False)


def test_prepare_errors_reach_the_pod_and_are_retried(cluster):
    c = cluster
    d = dirs(c, "ext-1")
    with ThreadedPlugin("gpu.example.com", "ext-1", d["registry"], d["plugins"], c.kubeconfig) as p:
        p.fail_prepare = "device is being reset"
        until(lambda: p.registered, what="registered")
        c.kubectl("apply", "-f", "-", input=pod_yaml("failing", "ext-1"))
        ev = until(lambda: events(c, "failing", "FailedPrepareDynamicResources"), what="failure event")
        assert ev[0]["type"] == "Warning"
        assert ev[0]["message"] == (
            "Failed to prepare dynamic resources: prepare dynamic resources: "
            "NodePrepareResources failed for ResourceClaim failing: device is being reset"
        )
        assert phase(c, "failing") == "Pending"
        until(lambda: p.prepare_calls >= 2, what="prepare retried")
        p.fail_prepare = ""
        until(lambda: phase(c, "failing") == "Running", what="running once the plugin recovers")
        c.kubectl("delete", "pod", "failing", "--wait=true")


def test_version_negotiation(cluster):
    c = cluster
    d = dirs(c, "ext-2")
    with ThreadedPlugin(
        "gpu.example.com", "ext-2", d["registry"], d["plugins"], c.kubeconfig, versions=["v1beta1.DRAPlugin"]
    ) as p:
        until(lambda: p.registered, what="a v1beta1-only plugin registers")
        c.kubectl("apply", "-f", "-", input=pod_yaml("beta", "ext-2"))
        until(lambda: phase(c, "beta") == "Running", what="prepared through v1beta1")
        assert ("NodePrepareResources", "v1beta1.DRAPlugin") in p.plugin.calls
        c.kubectl("delete", "pod", "beta", "--wait=true")
        until(lambda: ("NodeUnprepareResources", "v1beta1.DRAPlugin") in p.plugin.calls, what="unprepared")
    with ThreadedPlugin(
        "gpu.example.com", "ext-2", d["registry"], d["plugins"], c.kubeconfig, versions=["v9.DRAPlugin"]
    ) as p:
        err = until(lambda: p.plugin.registration_error, what="registration refused")
        assert "none of the versions supported by the plugin (v9.DRAPlugin)" in err
        assert not p.registered


def test_health_stream_drives_pod_status_and_taint(cluster):
    c = cluster
    d = dirs(c, "ext-3")
    with ThreadedPlugin("gpu.example.com", "ext-3", d["registry"], d["plugins"], c.kubeconfig) as p:
        until(lambda: p.registered, what="registered")
        c.kubectl("apply", "-f", "-", input=pod_yaml("sick", "ext-3"))
        until(lambda: phase(c, "sick") == "Running", what="running")
        claim = get(c, "resourceclaim", "sick")
        device = claim["status"]["allocation"]["devices"]["results"][0]["device"]

        def health() -> list:
            cs = (get(c, "pod", "sick").get("status") or {}).get("containerStatuses") or [{}]
            return cs[0].get("allocatedResourcesStatus") or []

        assert health() == [
            {"name": "claim:gpu", "resources": [{"resourceID": f"gpu.example.com/gpu={device}", "health": "Unknown"}]}
        ]
        p.set_health("ext-3", device, "Unhealthy", "XID 79")
        until(lambda: health() and health()[0]["resources"][0]["health"] == "Unhealthy", what="unhealthy in status")
        rules = until(
            lambda: [
                r for r in get(c, "devicetaintrules")["items"] if r["spec"]["deviceSelector"].get("device") == device
            ],
            what="taint rule",
        )
        assert rules[0]["spec"]["taint"] == {
            "key": "gpu.example.com/unhealthy",
            "value": "true",
            "effect": "NoSchedule",
        } | {k: v for k, v in rules[0]["spec"]["taint"].items() if k == "timeAdded"}
        p.set_health("ext-3", device, "Healthy")
        until(lambda: health() and health()[0]["resources"][0]["health"] == "Healthy", what="healthy again")
        until(
            lambda: (
                not [
                    r
                    for r in get(c, "devicetaintrules")["items"]
                    if r["spec"]["deviceSelector"].get("device") == device
                ]
            ),
            what="taint rule removed",
        )
        c.kubectl("delete", "pod", "sick", "--wait=true")


def test_plugin_dirs_endpoint(cluster):
    import urllib.request

    with urllib.request.urlopen(f"{cluster.url}/mockkube/v1/nodes/oop/plugins", timeout=10) as r:
        body = json.loads(r.read())
    assert body["registry"].endswith("/oop/plugins_registry") and body["plugins"].endswith("/oop/plugins")
    assert "gpu.example.com" in until(lambda: dirs(cluster, "oop")["registered"], what="registered")


def test_restarting_kubelet_wipes_stale_slices(cluster):
    c = cluster
    c.kubectl(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: stale-slice}
spec:
  driver: gone.example.com
  nodeName: ext-1
  pool: {name: ext-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-0}]
""",
    )
    rt = cluster_of(c.server)
    on_cluster(c, rt.stop_kubelet, "ext-1")
    assert get(c, "resourceslice", "stale-slice")  # a stopped kubelet wipes nothing
    on_cluster(c, rt.start_kubelet, "ext-1")
    until(lambda: not get(c, "resourceslice", "stale-slice"), what="stale slice wiped on kubelet start")


def test_plugin_refuses_unallocated_claims_and_other_uids(cluster):
    c = cluster
    d = dirs(c, "ext-2")
    c.kubectl("apply", "-f", "-", input=pod_yaml("lonely", "ext-2").split("---")[0])
    uid = get(c, "resourceclaim", "lonely")["metadata"]["uid"]
    with ThreadedPlugin("gpu.example.com", "ext-2", d["registry"], d["plugins"], c.kubeconfig) as p:
        ref = {"namespace": "default", "name": "lonely"}
        assert p.call(p.proc.prepare, dict(ref, uid=uid)) == "claim default/lonely not allocated"
        assert "UID mismatch" in p.call(p.proc.prepare, dict(ref, uid="0000"))
        assert "not found" in p.call(p.proc.prepare, dict(ref, name="missing", uid=uid))
    c.kubectl("delete", "resourceclaim", "lonely")


def test_driver_crash_fault_deregisters_the_plugin_until_removed(cluster):
    def registered() -> list:
        with urllib.request.urlopen(f"{cluster.url}/mockkube/v1/nodes/oop/plugins", timeout=30) as r:
            return json.loads(r.read())["registered"]

    until(lambda: "gpu.example.com" in registered(), timeout=60, what="plugin registered")
    f = cluster.inject({"kind": "driver-crash", "node": "oop", "driver": "gpu.example.com"})
    until(lambda: "gpu.example.com" not in registered(), timeout=60, what="plugin gone after the crash")
    cluster.call(cluster.server.faults.remove, f.id)
    until(lambda: "gpu.example.com" in registered(), timeout=60, what="plugin back")


def test_out_of_process_driver_publishes_to_a_secured_server(tmp_path):
    """With --authorization-mode=Node,RBAC (TLS, authentication) the plugin process reaches the
    server with the kubeconfig's CA and admin certificate (Node: the kubelets register their
    nodes, as with kubeadm)."""
    (tmp_path / "profile.yaml").write_text(PROFILE)
    c = ThreadedCluster(
        workdir=str(tmp_path), cluster=str(tmp_path / "profile.yaml"), authorization_mode="Node,RBAC"
    ).start()
    try:
        assert c.url.startswith("https://")
        until(lambda: len(slices(c, "oop")) == 1, what="slices published by the plugin process over TLS")
    finally:
        c.stop()
