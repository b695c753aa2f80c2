"""A DRA driver installed from its own chart, as on a real cluster (process runtime): the
kubelet-plugin DaemonSet's pods run the driver's program (the profile's ``kubelet.images``
maps the chart's image to tests/e2e/programs/mockkube_driver.py) with the node's plugin
directories as hostPath volumes and NODE_NAME from the downward API, so each node's plugin
publishes its slices and registers over gRPC with that node's kubelet; the controller
Deployment reaches the API with the Python client's in-cluster configuration (TLS, its
ServiceAccount's token, under RBAC). ``helm install --wait`` returns once all of it runs;
a pod claiming a device gets the plugin's CDI environment. Nothing is started by hand."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from mockkube.kubelet.runtime import sandbox

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sandbox.available() != "", reason=f"process runtime: {sandbox.available()}"),
]

HERE = Path(__file__).parent
# KEP-5304: where a container finds the metadata of request "gpu" of its pod claim "gpu"
METADATA = "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json"
CHART = str(HERE / "manifests" / "dra-process-driver")
PLUGIN_IMAGE = "registry.example.com/test-driver/kubelet-plugin:dev"
CONTROLLER_IMAGE = "registry.example.com/test-driver/controller:dev"
WEBHOOK_IMAGE = "registry.example.com/test-driver/webhook:dev"
PROFILE = {
    "nodes": [{"name": "gpu-node", "count": 2}],
    "deviceClasses": False,
    "kubelet": {
        "runtime": "process",
        "images": {
            PLUGIN_IMAGE: [sys.executable, str(HERE / "programs" / "mockkube_driver.py")],
            CONTROLLER_IMAGE: [sys.executable, str(HERE / "programs" / "slice_reporter.py")],
            WEBHOOK_IMAGE: [sys.executable, str(HERE / "programs" / "admission_webhook.py")],
        },
    },
}


def items(c, kind: str, namespace: str | None = None, **params) -> list[dict]:
    r = c.http.get(c.url + c.resource_path(kind, namespace), params=params, timeout=30)
    r.raise_for_status()
    return r.json()["items"]


def wait_until(fn, what, timeout: float = 30.0):
    """Poll ``fn`` until it is true; ``what`` (a string, or a callable making one) says what
    was awaited when it never is."""
    deadline = time.monotonic() + timeout
    while not (got := fn()):
        assert time.monotonic() < deadline, f"timed out waiting for {what() if callable(what) else what}"
        time.sleep(0.2)
    return got


@pytest.mark.mockkube(auth=True, profile=PROFILE)
def test_a_driver_chart_installs_and_its_plugins_prepare_claims(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.helm(
        "install", "drv", CHART, "-n", ns, "--set", "kubeletPlugin.deviceMetadata=true", "--wait", "--timeout", "90s"
    )
    nodes = sorted(n["metadata"]["name"] for n in items(c, "nodes"))
    assert len(nodes) == 2
    # every node's kubelet gets the plugin its DaemonSet pod registers, over gRPC (a pod is
    # Ready once its process runs: the plugin starts up after `helm install --wait` returns)
    plugin_pods = items(c, "pods", ns, labelSelector="app.kubernetes.io/name=drv-kubeletplugin")
    assert sorted(p["spec"]["nodeName"] for p in plugin_pods) == nodes
    for node in nodes:
        wait_until(
            lambda node=node: (
                c.http.get(f"{c.url}/mockkube/v1/nodes/{node}/plugins", timeout=10).json()["registered"]
                == ["gpu.example.com"]
            ),
            lambda node=node: (
                f"the plugin of {node} to register; the plugins' logs: "
                + " | ".join(
                    c.kubectl("logs", "-n", ns, p["metadata"]["name"], check=False).stdout for p in plugin_pods
                )
            ),
        )
    slices = [s for s in items(c, "resourceslices") if s["spec"]["driver"] == "gpu.example.com"]
    assert sorted(s["spec"]["nodeName"] for s in slices) == nodes
    # the controller counted them through the API, with its in-cluster configuration
    status = c.wait_for("configmaps", "drv-status", lambda o: o["data"]["slices"] == "2", ns)
    assert status["data"]["nodes"] == ",".join(nodes)
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input="""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: app
    image: busybox
    command: [sh, -c, 'echo "device $GPU_DEVICE_0 of claim $DRA_CLAIM_UID"; cat $0; exec sleep infinity', $METADATA]
    resources: {claims: [{name: gpu}]}
""".replace("$METADATA", METADATA),
    )
    pod = c.wait_for_pod_phase("app", "Running", ns, timeout=60)
    claim = c.get("resourceclaims", pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"], ns)
    result = claim["status"]["allocation"]["devices"]["results"][0]
    assert result["pool"] == pod["spec"]["nodeName"]
    out = wait_until(
        lambda: (
            c.kubectl("logs", "-n", ns, "app").stdout.count("\n") >= 2 and c.kubectl("logs", "-n", ns, "app").stdout
        ),
        "the app's output",
    )
    line, _, metadata = out.partition("\n")
    assert line == f"device {result['device']} of claim {claim['metadata']['uid']}"
    # KEP-5304: the plugin's device metadata, mounted through its CDI spec where the workload
    # finds it by its pod claim and request names
    doc = json.loads(metadata)
    assert doc["apiVersion"] == "metadata.resource.k8s.io/v1alpha1" and doc["podClaimName"] == "gpu"
    assert doc["metadata"]["uid"] == claim["metadata"]["uid"]
    [device] = doc["requests"][0]["devices"]
    assert (device["pool"], device["name"]) == (result["pool"], result["device"])
    assert device["attributes"] == next(
        d["attributes"]
        for s in slices
        for d in s["spec"]["devices"]
        if d["name"] == result["device"] and s["spec"]["pool"]["name"] == result["pool"]
    )
    events = c.kubectl("get", "events", "-n", ns, "--field-selector", "reason=ResourceClaimPrepared").stdout
    assert f"gpu.example.com/gpu={result['device']}" in events
    # the plugin's own log: its pod's output
    log = c.kubectl("logs", "-n", ns, plugin_pods[0]["metadata"]["name"]).stdout
    assert "gpu.example.com kubelet plugin for node" in log and "/var/lib/kubelet/plugins/" in log
    # unprepared once the pod is gone, and the chart uninstalls cleanly
    c.kubectl("delete", "pod", "app", "-n", ns, "--wait=true", "--grace-period=1")
    c.helm("uninstall", "drv", "-n", ns, "--wait", "--timeout", "60s")
    for node in nodes:
        wait_until(
            lambda node=node: (
                not c.http.get(f"{c.url}/mockkube/v1/nodes/{node}/plugins", timeout=10).json()["registered"]
            ),
            f"the plugin of {node} to go",
        )


@pytest.mark.mockkube(auth=True, profile=PROFILE)
def test_in_cluster_config_without_rights_gets_403(mockkube, mockkube_namespace):
    """The same controller under a ServiceAccount without a role: its token is authenticated
    (TLS, the mounted CA) and RBAC refuses the list."""
    c, ns = mockkube, mockkube_namespace
    c.kubectl("run", "noright", "-n", ns, f"--image={CONTROLLER_IMAGE}", "--restart=Never", "--env=DRIVER_NAME=x")
    pod = c.wait_for_pod_phase("noright", "Failed", ns, timeout=60)
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    out = c.kubectl("logs", "-n", ns, "noright").stdout
    assert "API error: 403 Forbidden" in out
    assert f'User \\"system:serviceaccount:{ns}:default\\" cannot list resource \\"resourceslices\\"' in out


@pytest.mark.mockkube(auth=True, profile=PROFILE)
def test_an_admission_webhook_deployment_is_called_through_its_service(mockkube, mockkube_namespace):
    """A webhook served by a Deployment's process, reached by the API server through its
    Service (TLS verified for hook.<ns>.svc against the configuration's caBundle)."""
    import base64
    import socket

    from mockkube.apiserver import certs

    c, ns = mockkube, mockkube_namespace
    ca = certs.make_ca("webhook-ca")
    pair = certs.make_serving(ca, [f"hook.{ns}.svc"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    c.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        input=f"""
apiVersion: v1
kind: Secret
metadata: {{name: hook-tls}}
type: kubernetes.io/tls
data: {{tls.crt: {b64(pair.cert_pem)}, tls.key: {b64(pair.key_pem)}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: hook}}
spec:
  selector: {{matchLabels: {{app: hook}}}}
  template:
    metadata: {{labels: {{app: hook}}}}
    spec:
      containers:
      - name: hook
        image: {WEBHOOK_IMAGE}
        env: [{{name: PORT, value: "{port}"}}]
        ports: [{{name: https, containerPort: {port}}}]
        readinessProbe: {{tcpSocket: {{port: https}}, periodSeconds: 1}}
        volumeMounts: [{{name: tls, mountPath: /tls}}]
      volumes: [{{name: tls, secret: {{secretName: hook-tls}}}}]
---
apiVersion: v1
kind: Service
metadata: {{name: hook}}
spec:
  selector: {{app: hook}}
  ports: [{{port: 443, targetPort: https}}]
""",
    )
    c.kubectl("rollout", "status", "-n", ns, "deployment/hook", "--timeout=60s")
    c.kubectl(
        "apply",
        "-f",
        "-",
        input=f"""
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: deny-{ns}}}
webhooks:
- name: deny.example.com
  clientConfig:
    service: {{namespace: {ns}, name: hook, path: /validate}}
    caBundle: {b64(ca.cert_pem)}
  rules: [{{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}}]
  namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
""",
    )
    try:
        hook_pod = items(c, "pods", ns, labelSelector="app=hook")[0]["metadata"]["name"]
        r = c.kubectl("run", "no", "-n", ns, "--image=busybox", "--labels=deny=true", "--", "true", check=False)
        assert r.returncode == 1
        assert r.stderr.strip() == (
            f'Error from server: admission webhook "deny.example.com" denied the request: denied by {hook_pod}'
        )
        c.kubectl("run", "yes", "-n", ns, "--image=busybox", "--restart=Never", "--", "true")
        log = c.kubectl("logs", "-n", ns, hook_pod).stdout
        assert "CREATE Pod no: False" in log and "CREATE Pod yes: True" in log
    finally:
        c.kubectl("delete", "validatingwebhookconfiguration", f"deny-{ns}")
