"""Why is this pod pending: the quickstart runs as written on the demo cluster, and
`mockkube explain pod`, GET .../pods/NAME/explain and the WhyPending event/annotation name
the request, the device and the reason (selector with the values seen, missing node,
allocated to which claim of which pod, taint, counters, missing class)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from mockkube.scheduler.explain import ANNOTATION
from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

MANIFESTS = Path(__file__).parent / "manifests"
ROOT = Path(__file__).parents[2]


def explain_json(cluster, name: str, ns: str = "default") -> dict:
    url = f"{cluster.url}/mockkube/v1/namespaces/{ns}/pods/{name}/explain"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def explain_cli(cluster, name: str, *extra: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "mockkube", "explain", "pod", name, "--server", cluster.url, *extra],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def candidates(report: dict) -> dict[str, dict]:
    return {d["device"]: d for c in report["claims"] for r in c.get("requests") or () for d in r["candidates"]}


@pytest.fixture
def demo_as_served(tmp_path):
    """The demo cluster as `mockkube serve` runs it (with its control plane), which
    docs/quickstart.md and docs/explain.md show."""
    from mockkube.testing.cluster import ThreadedCluster

    c = ThreadedCluster(workdir=str(tmp_path), control_plane=True).start()
    try:
        yield c
    finally:
        c.stop()


def test_quickstart_runs_as_written_and_explains_a_pod_that_cannot_fit(demo_as_served):
    mockkube_fresh = demo_as_served
    k = mockkube_fresh.kubectl
    # docs/quickstart.md, in order
    assert "resourceclaims" in k("api-resources").stdout
    k("create", "namespace", "demo")
    out = k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-cats.yaml")).stdout
    assert "pod/pod-with-cats created" in out
    k("get", "resourceslices,deviceclasses,resourceclaimtemplates,pods")
    k("wait", "--for=jsonpath={.status.phase}=Running", "pod/pod-with-cats", "--timeout=60s")
    pod = json.loads(k("get", "pod", "pod-with-cats", "-o", "json").stdout)
    claim = json.loads(
        k("get", "resourceclaim", pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"], "-o", "json").stdout
    )
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert result["driver"] == "gpu.example.com" and "-" not in result["device"].removeprefix("gpu-")
    assert explain_json(mockkube_fresh, "pod-with-cats")["scheduled"] is True

    # docs/explain.md: a pod that cannot fit
    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-tiger.yaml"))
    text = until(
        lambda: (lambda t: t if "WhyPending" in t else None)(k("describe", "pod", "pod-with-tiger").stdout),
        what="WhyPending event",
    )
    assert 'model == "H100"' in text and "LATEST-GPU-MODEL" in text
    shown = explain_cli(mockkube_fresh, "pod-with-tiger")
    assert shown.startswith("Pod default/pod-with-tiger: 0/5 nodes fit")
    assert (
        "node mockkube-control-plane: no (NodeUnschedulable=ok; TaintToleration=node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }" in shown
    )
    assert "node gpu-node-0: no (" in shown and "DynamicResources=cannot allocate all claims" in shown
    assert (
        'request selector #0 is false: device.attributes["gpu.example.com"].model == "H100" '
        "(device has device.attributes[\"gpu.example.com\"].model='LATEST-GPU-MODEL')"
    ) in shown
    assert "device.capacity[\"gpu.example.com\"].memory='10737418240'" in shown  # a 1g partition, as published
    assert "to make it fit:" in shown
    report = explain_json(mockkube_fresh, "pod-with-tiger")
    gpu0 = candidates(report)["gpu.example.com/gpu-node-0/gpu-0"]
    assert gpu0["reason"] == "SelectorFalse" and gpu0["seen"] == {
        'device.attributes["gpu.example.com"].model': "LATEST-GPU-MODEL"
    }
    assert all(not d.startswith("cpu.example.com/") for d in candidates(report))  # other classes: not candidates
    pod = json.loads(k("get", "pod", "pod-with-tiger", "-o", "json").stdout)
    assert pod["metadata"]["annotations"][ANNOTATION].startswith("Pod default/pod-with-tiger: 0/5 nodes fit")


TOYS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: toy.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "toy.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: toys-counters}
spec:
  driver: toy.example.com
  nodeName: gpu-node-0
  pool: {name: toys, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: board
    counters: {power: {value: "1"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: toys-devices}
spec:
  driver: toy.example.com
  nodeName: gpu-node-0
  pool: {name: toys, generation: 1, resourceSliceCount: 2}
  devices:
  - name: toy-0
    taints: [{key: example.com/broken, value: "yes", effect: NoSchedule}]
  - name: toy-1
  - name: toy-2
    consumesCounters:
    - counterSet: board
      counters: {power: {value: "2"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: toys-elsewhere}
spec:
  driver: toy.example.com
  nodeName: worker-1
  pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: toy-9
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: first-toy}
spec:
  devices:
    requests:
    - name: toy
      exactly:
        deviceClassName: toy.example.com
        selectors: [{cel: {expression: 'device.attributes["toy.example.com"].name == "nope" || true'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: holder}
spec:
  resourceClaims: [{name: toy, resourceClaimName: first-toy}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: toy}]}}]
"""

WANTS_A_TOY = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: second-toy}
spec:
  devices:
    requests:
    - name: toy
      exactly: {deviceClassName: toy.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: wants-a-toy}
spec:
  resourceClaims: [{name: toy, resourceClaimName: second-toy}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: toy}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: classless}
spec:
  devices:
    requests:
    - name: thing
      exactly: {deviceClassName: no-such-class.example.com}
---
apiVersion: v1
kind: Pod
metadata: {name: wants-a-class}
spec:
  resourceClaims: [{name: thing, resourceClaimName: classless}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: thing}]}}]
"""


def test_explain_names_taint_holder_counters_missing_node_and_class(mockkube_fresh):
    k = mockkube_fresh.kubectl
    k("apply", "-f", "-", input=TOYS)
    until(
        lambda: (
            json.loads(k("get", "resourceclaim", "first-toy", "-o", "json").stdout).get("status", {}).get("allocation")
        ),
        what="first toy allocated",
    )
    k("apply", "-f", "-", input=WANTS_A_TOY)
    until(
        lambda: json.loads(k("get", "pod", "wants-a-toy", "-o", "json").stdout)["status"].get("conditions"),
        what="a scheduling attempt",
    )
    report = explain_json(mockkube_fresh, "wants-a-toy")
    c = candidates(report)
    assert c["toy.example.com/toys/toy-0"]["reason"] == "TaintNotTolerated"
    assert "example.com/broken=yes:NoSchedule" in c["toy.example.com/toys/toy-0"]["message"]
    assert c["toy.example.com/toys/toy-1"] == {
        "reason": "Allocated",
        "message": "allocated to claim default/first-toy (pod holder)",
        "holders": "claim default/first-toy (pod holder)",
        "fix": "delete or finish the pod(s) holding claim default/first-toy (pod holder)",
        "device": "toy.example.com/toys/toy-1",
    }
    assert c["toy.example.com/toys/toy-2"]["reason"] == "CountersExhausted"
    assert c["toy.example.com/toys/toy-2"]["message"] == "counter set board counter power: needs 2, 1 left"
    assert c["toy.example.com/worker-1/toy-9"]["reason"] == "NodeNotFound"
    assert "names node worker-1, which does not exist" in c["toy.example.com/worker-1/toy-9"]["message"]
    assert any("add node worker-1" in f for f in report["fix"])

    report = explain_json(mockkube_fresh, "wants-a-class")
    [claim] = report["claims"]
    assert 'deviceclass.resource.k8s.io "no-such-class.example.com" not found' in claim["error"]
    assert claim["fix"] == "create the DeviceClass"
    text = explain_cli(mockkube_fresh, "wants-a-class")
    assert "no-such-class.example.com" in text

    k(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: cel-error}
spec:
  devices:
    requests:
    - name: toy
      exactly:
        deviceClassName: toy.example.com
        selectors: [{cel: {expression: 'device.attributes["toy.example.com"].color == "red"'}}]
---
apiVersion: v1
kind: Pod
metadata: {name: wants-a-red-toy}
spec:
  resourceClaims: [{name: toy, resourceClaimName: cel-error}]
  containers: [{name: c, image: busybox, resources: {claims: [{name: toy}]}}]
""",
    )
    until(
        lambda: json.loads(k("get", "pod", "wants-a-red-toy", "-o", "json").stdout)["status"].get("conditions"),
        what="a scheduling attempt",
    )
    c = candidates(explain_json(mockkube_fresh, "wants-a-red-toy"))
    assert c["toy.example.com/toys/toy-1"]["reason"] == "CELRuntimeError"
    assert "request selector #0: CEL runtime error" in c["toy.example.com/toys/toy-1"]["message"]

    missing = subprocess.run(
        [sys.executable, "-m", "mockkube", "explain", "pod", "nope", "--server", mockkube_fresh.url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1 and 'pods "nope" not found' in missing.stderr
