"""autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscalers over HTTP: one stored object
seen through both versions (upstream's conversion with its round-trip annotations),
defaults, validation as upstream's, the status subresource, discovery and the Table."""

from __future__ import annotations

import asyncio
import json

V2 = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"


def _v2(name: str, **spec) -> dict:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 3,
            **spec,
        },
    }


async def test_v1_and_v2_are_one_object(api):
    metrics = [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
    ]
    st, body, _ = await api.post(
        V2, _v2("both", metrics=metrics, behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    )
    assert st == 201, body
    assert body["spec"]["minReplicas"] == 1
    assert body["spec"]["behavior"]["scaleUp"] == {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    }
    assert body["status"] == {"currentMetrics": None, "desiredReplicas": 0}
    st, v1, _ = await api.get(f"{V1}/both")
    assert st == 200 and v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 3,
        "targetCPUUtilizationPercentage": 50,
    }
    ann = v1["metadata"]["annotations"]
    assert ann["autoscaling.alpha.kubernetes.io/metrics"] == (
        '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]'
    )
    assert '"ScaleDown":{"StabilizationWindowSeconds":60' in ann["autoscaling.alpha.kubernetes.io/behavior"]
    # a v1 round trip keeps everything v2 holds
    v1["spec"]["maxReplicas"] = 4
    st, body, _ = await api.put(f"{V1}/both", v1)
    assert st == 200, body
    st, v2, _ = await api.get(f"{V2}/both")
    assert v2["spec"]["maxReplicas"] == 4
    assert v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert sorted(m["type"] for m in v2["spec"]["metrics"]) == ["Pods", "Resource"]
    assert "annotations" not in v2["metadata"]
    # v1 lists and watches convert too
    st, lst, _ = await api.get(V1)
    assert [i["apiVersion"] for i in lst["items"]] == ["autoscaling/v1"] and lst["apiVersion"] == "autoscaling/v1"
    async with api.s.get(api.url + V1, params={"watch": "true", "resourceVersion": "0"}) as r:
        ev = json.loads(await asyncio.wait_for(r.content.readline(), 5))
    assert ev["type"] == "ADDED" and ev["object"]["apiVersion"] == "autoscaling/v1"
    assert ev["object"]["spec"]["targetCPUUtilizationPercentage"] == 50


async def test_v1_create_defaults_cpu(api):
    body = {
        "metadata": {"name": "old"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 2},
    }
    st, out, _ = await api.post(V1, body)
    assert st == 201, out
    assert out["apiVersion"] == "autoscaling/v1" and out["spec"]["targetCPUUtilizationPercentage"] == 80
    st, v2, _ = await api.get(f"{V2}/old")
    assert v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}
    ]


async def test_validation_as_upstream(api):
    bad = _v2("bad", minReplicas=5, maxReplicas=2)
    bad["spec"]["scaleTargetRef"] = {"kind": "Deployment"}
    bad["spec"]["metrics"] = [{"type": "Pods", "resource": {"name": "cpu"}}]
    st, body, _ = await api.post(V2, bad)
    assert st == 422
    causes = [(c["reason"], c["field"]) for c in body["details"]["causes"]]
    assert causes == [
        ("FieldValueInvalid", "spec.maxReplicas"),
        ("FieldValueRequired", "spec.scaleTargetRef.name"),
        ("FieldValueRequired", "spec.metrics[0].resource.target.type"),
        ("FieldValueInvalid", "spec.metrics[0].resource.target.type"),
        ("FieldValueRequired", "spec.metrics[0].resource.target.averageUtilization"),
        ("FieldValueRequired", "spec.metrics[0].pods"),
    ]
    assert "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`" in body["message"]
    st, body, _ = await api.post(V2, _v2("zero", minReplicas=0))
    assert st == 422 and "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1" in body["message"]
    st, body, _ = await api.post(
        V2, _v2("beh", behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}})
    )
    assert st == 422
    assert {c["field"] for c in body["details"]["causes"]} == {
        "spec.behavior.scaleUp.policies[0].value",
        "spec.behavior.scaleUp.policies[0].periodSeconds",
    }


async def test_status_subresource_and_table(api):
    assert (await api.post(V2, _v2("st")))[0] == 201
    st, obj, _ = await api.get(f"{V2}/st")
    obj["status"] = {"currentReplicas": 2, "desiredReplicas": 2}
    obj["spec"]["maxReplicas"] = 9
    st, out, _ = await api.put(f"{V2}/st/status", obj)
    assert st == 200 and out["status"]["currentReplicas"] == 2 and out["spec"]["maxReplicas"] == 3
    obj = out
    obj["status"]["desiredReplicas"] = -1
    st, body, _ = await api.put(f"{V2}/st/status", obj)
    assert st == 422 and body["details"]["causes"][0]["field"] == "status.desiredReplicas"
    st, tbl, _ = await api.get(V2, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in tbl["columnDefinitions"]] == [
        "Name",
        "Reference",
        "Targets",
        "MinPods",
        "MaxPods",
        "Replicas",
        "Age",
    ]
    assert tbl["rows"][0]["cells"][:6] == ["st", "Deployment/web", "cpu: <unknown>/80%", "1", 3, 2]


async def test_discovery(api):
    st, svc, _ = await api.get("/apis/apiregistration.k8s.io/v1/apiservices/v2.autoscaling")
    assert (svc["spec"]["groupPriorityMinimum"], svc["spec"]["versionPriority"]) == (17500, 30)
    st, body, _ = await api.get("/apis/autoscaling")
    assert [v["version"] for v in body["versions"]] == ["v2", "v1"] and body["preferredVersion"]["version"] == "v2"
    for v in ("v1", "v2"):
        st, body, _ = await api.get(f"/apis/autoscaling/{v}")
        hpa = body["resources"][0]
        assert (hpa["name"], hpa["shortNames"], hpa["categories"], hpa["namespaced"]) == (
            "horizontalpodautoscalers",
            ["hpa"],
            ["all"],
            True,
        )
        assert [r["name"] for r in body["resources"]] == ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]


async def test_controller_rescales_within_bounds_under_rbac():
    """The horizontal-pod-autoscaler controller acts as its upstream ServiceAccount (RBAC
    enforced): it writes the target's scale and the HPA's status, and with no metrics API
    says so in ScalingActive."""
    from mockkube.client.client import Client
    from mockkube.testing.cluster import running_server

    async with running_server(
        components=True, authorization_mode="Node,RBAC", cluster="nodes: []\ndeviceClasses: false\n"
    ) as server:
        c = Client(server.resources, "test")
        c.create(
            c.rt("deployments", "apps"),
            {
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": 5,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            },
        )
        hpa_rt = c.rt("horizontalpodautoscalers", "autoscaling", "v2")
        c.create(hpa_rt, _v2("web"), "default")
        await server.settled()
        assert c.get(c.rt("deployments", "apps"), "default", "web")["spec"]["replicas"] == 3
        hpa = c.get(hpa_rt, "default", "web")
        conds = {x["type"]: x for x in hpa["status"]["conditions"]}
        assert hpa["status"]["currentReplicas"] == 3 and hpa["status"]["desiredReplicas"] == 3
        assert hpa["status"]["currentMetrics"] == [{"type": ""}]
        assert (conds["AbleToScale"]["status"], conds["AbleToScale"]["reason"]) == ("True", "SucceededGetScale")
        assert conds["ScalingActive"]["message"] == (
            "the HPA was unable to compute the replica count: unable to get metrics for resource cpu: unable to "
            "fetch metrics from resource metrics API: the server could not find the requested resource "
            "(get pods.metrics.k8s.io)"
        )
        assert "lastScaleTime" in hpa["status"]
