"""ReplicationControllers run by the ReplicaSet logic: scale, status, adoption, deletion."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"""


def test_replication_controller_scales_and_owns_its_pods(mockkube, mockkube_namespace):
    c, ns = mockkube, mockkube_namespace
    c.kubectl("apply", "-n", ns, "-f", "-", input=RC)
    c.wait_for("rc", "web", lambda o: (o.get("status") or {}).get("readyReplicas") == 3, ns)
    pods = json.loads(c.kubectl("get", "pods", "-n", ns, "-l", "app=web", "-o", "json").stdout)["items"]
    assert {p["metadata"]["ownerReferences"][0]["kind"] for p in pods} == {"ReplicationController"}
    assert all(p["metadata"]["generateName"] == "web-" for p in pods)
    c.kubectl("scale", "rc", "web", "-n", ns, "--replicas=1")
    st = c.wait_for("rc", "web", lambda o: (o.get("status") or {}).get("replicas") == 1, ns)["status"]
    assert "terminatingReplicas" not in st and st["observedGeneration"] == 2
    assert c.kubectl("get", "rc", "web", "-n", ns).stdout.split("\n")[1].split()[:4] == ["web", "1", "1", "1"]
    c.kubectl("delete", "rc", "web", "-n", ns, "--wait=true")
    c.wait_for("pods", pods[0]["metadata"]["name"], "deleted", ns)
