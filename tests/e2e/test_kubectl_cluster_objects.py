"""kubectl and helm against the objects around pods: priority classes (a chart with
system-node-critical), disruption budgets and `kubectl drain`, claims bound by the
simulated provisioner, endpoints and slices, kube-root-ca.crt, APIServices."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
CHART = str(Path(__file__).parent / "manifests" / "critical-chart")


def _until(fn, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        out = fn()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.1)


def _json(c, *args):
    return json.loads(c.kubectl(*args, "-o", "json").stdout)


def test_helm_chart_with_system_node_critical(mockkube_fresh):
    c = mockkube_fresh
    c.helm("install", "drv", CHART, "--wait", "--timeout", "60s")
    pods = _json(c, "get", "pods", "-l", "app=drv-plugin")["items"]
    assert len(pods) == 2
    assert {(p["spec"]["priorityClassName"], p["spec"]["priority"]) for p in pods} == {
        ("system-node-critical", 2000001000)
    }
    assert _json(c, "get", "pvc", "drv-data")["status"]["phase"] == "Bound"
    pdb = _until(lambda: (p := _json(c, "get", "pdb", "drv-pdb"))["status"].get("currentHealthy") == 2 and p)
    assert (pdb["status"]["desiredHealthy"], pdb["status"]["disruptionsAllowed"], pdb["status"]["expectedPods"]) == (
        1,
        1,
        2,
    )
    ep = _until(lambda: (e := _json(c, "get", "endpoints", "drv-svc")).get("subsets") and e)
    assert len(ep["subsets"][0]["addresses"]) == 2 and ep["subsets"][0]["ports"][0]["port"] == 8080
    slices = _json(c, "get", "endpointslices", "-l", "kubernetes.io/service-name=drv-svc")["items"]
    assert len(slices) == 1 and len(slices[0]["endpoints"]) == 2
    assert all(e["conditions"]["ready"] for e in slices[0]["endpoints"])
    out = c.kubectl("get", "priorityclass").stdout
    assert "system-node-critical" in out and "2000001000" in out and "drv-high" in out
    c.helm("uninstall", "drv", "--wait")
    assert c.kubectl("get", "pvc", "drv-data", check=False).returncode != 0


def test_unknown_priority_class_is_forbidden(mockkube_fresh):
    r = mockkube_fresh.kubectl(
        "run", "p", "--image=busybox", "--overrides", json.dumps({"spec": {"priorityClassName": "nope"}}), check=False
    )
    assert r.returncode != 0
    assert 'Error from server (Forbidden): pods "p" is forbidden: no PriorityClass with name nope was found' in r.stderr


def test_drain_honours_the_disruption_budget(mockkube_fresh):
    c = mockkube_fresh
    c.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
    c.kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=2")
    _until(lambda: _json(c, "get", "pdb", "web")["status"].get("currentHealthy") == 2)
    node = _json(c, "get", "pods", "-l", "app=web")["items"][0]["spec"]["nodeName"]
    r = c.kubectl("drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3s", check=False)
    assert r.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in r.stderr
    table = c.kubectl("get", "pdb", "web").stdout.split("\n")
    assert table[0].split() == ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"]
    assert table[1].split()[:4] == ["web", "2", "N/A", "0"]
    c.kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":0}}')
    _until(lambda: _json(c, "get", "pdb", "web")["status"].get("disruptionsAllowed") == 2)
    out = c.kubectl("drain", node, "--ignore-daemonsets", "--timeout=30s").stdout
    assert f"node/{node} drained" in out


def test_storage_endpoints_and_cluster_defaults(mockkube_fresh):
    c = mockkube_fresh
    assert "standard (default)" in c.kubectl("get", "storageclass").stdout
    c.kubectl("create", "namespace", "team")
    cm = _until(
        lambda: (
            (r := c.kubectl("get", "configmap", "kube-root-ca.crt", "-n", "team", "-o", "json", check=False)).returncode
            == 0
            and json.loads(r.stdout)
        )
    )
    assert cm["data"]["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")
    names = c.kubectl("get", "apiservices", "-o", "name").stdout.split()
    assert "apiservice.apiregistration.k8s.io/v1" in names and "apiservice.apiregistration.k8s.io/v1.apps" in names
    assert "Local" in c.kubectl("get", "apiservice", "v1.apps").stdout
    ep = _until(
        lambda: (
            (r := c.kubectl("get", "endpoints", "kubernetes", "-o", "json", check=False)).returncode == 0
            and json.loads(r.stdout)
        )
    )
    assert ep["subsets"][0]["ports"] == [{"name": "https", "port": int(c.url.rsplit(":", 1)[1]), "protocol": "TCP"}]
    c.kubectl(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: late}
provisioner: example.com/late
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: wait, namespace: team}
spec:
  storageClassName: late
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
""",
    )
    assert _json(c, "get", "pvc", "wait", "-n", "team")["status"]["phase"] == "Pending"
    c.kubectl(
        "run",
        "user",
        "-n",
        "team",
        "--image=busybox",
        "--overrides",
        json.dumps(
            {
                "spec": {
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "wait"}}],
                    "containers": [
                        {"name": "user", "image": "busybox", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}
                    ],
                }
            }
        ),
    )
    pvc = _until(lambda: (p := _json(c, "get", "pvc", "wait", "-n", "team"))["status"]["phase"] == "Bound" and p)
    pv = _json(c, "get", "pv", pvc["spec"]["volumeName"])
    node = _json(c, "get", "pod", "user", "-n", "team")["spec"]["nodeName"]
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [node]
    assert pv["spec"]["claimRef"]["name"] == "wait" and pv["status"]["phase"] == "Bound"
    row = c.kubectl("get", "pvc", "wait", "-n", "team").stdout.split("\n")[1].split()
    assert row[:6] == ["wait", "Bound", pv["metadata"]["name"], "2Gi", "RWO", "late"]
    c.kubectl("delete", "pod", "user", "-n", "team", "--grace-period=0", "--force")
    c.kubectl("delete", "pvc", "wait", "-n", "team", "--timeout=30s")
    _until(lambda: c.kubectl("get", "pv", pv["metadata"]["name"], check=False).returncode != 0)


def test_kubectl_create_and_get_every_new_kind(mockkube_fresh):
    c = mockkube_fresh
    assert (
        "priorityclass.scheduling.k8s.io/high created"
        in c.kubectl(
            "create", "priorityclass", "high", "--value=1000", "--description=high", "--preemption-policy=Never"
        ).stdout
    )
    row = c.kubectl("get", "pc", "high").stdout.split("\n")
    assert row[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert row[1].split()[:3] == ["high", "1000", "false"] and row[1].split()[-1] == "Never"
    c.kubectl("create", "ingress", "simple", "--rule=foo.com/bar=svc1:8080")
    assert "foo.com" in c.kubectl("get", "ing", "simple").stdout
    out = c.kubectl(
        "get",
        "pc,pdb,pvc,pv,sc,ep,endpointslices,limits,podtemplates,ing,ingressclass,netpol,"
        "runtimeclass,apiservices,csidrivers,csinodes,volumeattachments",
        "-A",
    ).stdout
    assert "system-node-critical" in out and "storageclass.storage.k8s.io/standard" in out
    resources = c.kubectl("api-resources", "--no-headers").stdout
    for short in ("pc", "pdb", "pvc", "pv", "sc", "ep", "limits", "ing", "netpol"):
        assert f" {short} " in resources, short
