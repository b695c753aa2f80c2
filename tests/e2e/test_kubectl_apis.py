"""kubectl against the APIs every kind cluster serves beyond workloads: `kubectl autoscale`
and HorizontalPodAutoscalers (v2 and v1), and `kubectl api-resources` listing them."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.e2e


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


def test_kubectl_autoscale(mockkube_fresh):
    c = mockkube_fresh
    c.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=5")
    out = c.kubectl("autoscale", "deployment", "web", "--min", "1", "--max", "3", "--cpu-percent", "50").stdout
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in out
    # the bounds rescale: 5 replicas are above maxReplicas
    _until(lambda: _json(c, "get", "deployment", "web")["spec"]["replicas"] == 3)
    hpa = _until(
        lambda: (
            (h := _json(c, "get", "hpa", "web"))
            and any(x["type"] == "ScalingActive" for x in (h.get("status") or {}).get("conditions") or ())
            and h
        )
    )
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]
    conds = {x["type"]: x for x in hpa["status"]["conditions"]}
    assert conds["AbleToScale"]["status"] == "True"
    assert (conds["ScalingActive"]["status"], conds["ScalingActive"]["reason"]) == ("False", "FailedGetResourceMetric")
    assert hpa["status"]["currentReplicas"] == 3 and hpa["status"]["desiredReplicas"] == 3
    table = c.kubectl("get", "hpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/50%", "1", "3", "3"]
    v1 = _json(c, "get", "horizontalpodautoscalers.v1.autoscaling", "web")
    assert v1["apiVersion"] == "autoscaling/v1" and v1["spec"]["targetCPUUtilizationPercentage"] == 50
    events = c.kubectl("get", "events", "--field-selector", "involvedObject.kind=HorizontalPodAutoscaler").stdout
    assert "SuccessfulRescale" in events and "New size: 3; reason: Current number of replicas above" in events
    assert "horizontalpodautoscaler.autoscaling/web" in c.kubectl("get", "all", "-o", "name").stdout
    bad = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bad"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 4, "maxReplicas": 3},
    }
    r = c.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert r.returncode != 0
    assert "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`" in r.stderr


def test_api_resources_lists_the_kind_apis(mockkube_fresh):
    rows = {}
    for line in mockkube_fresh.kubectl("api-resources", "--no-headers").stdout.splitlines():
        parts = line.split()
        rows[parts[0]] = parts[1:]
    assert rows["horizontalpodautoscalers"] == ["hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"]
