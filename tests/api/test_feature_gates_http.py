"""Feature gates and runtime-config over HTTP: what /metrics reports against the table
generated from upstream's 1.36 lists, what is served, what is dropped."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from mockkube.testing.cluster import running_server

TABLE = Path(__file__).resolve().parents[2] / "mockkube" / "config" / "feature_gates_v1.36.json"
TAINT_RULES = {"feature_gates": {"DRADeviceTaintRules": True}, "runtime_config": {"resource.k8s.io/v1beta2": True}}


async def _get(url: str, path: str):
    async with aiohttp.ClientSession() as s:
        async with s.get(url + path) as r:
            text = await r.text()
            return r.status, (json.loads(text) if r.content_type == "application/json" else text)


async def _post(url: str, path: str, body: dict):
    async with aiohttp.ClientSession() as s:
        async with s.post(url + path, json=body) as r:
            return r.status, await r.json()


def _feature_samples(text: str) -> dict[str, tuple[str, float]]:
    return {
        s.labels["name"]: (s.labels["stage"], s.value)
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == "kubernetes_feature_enabled"
    }


async def test_metrics_report_every_generated_gate_with_its_1_36_default():
    table = json.loads(TABLE.read_text())["gates"]  # the script's output, read here on its own
    async with running_server(components=False, cluster={"name": "bare"}) as server:
        status, text = await _get(server.url, "/metrics")
    assert status == 200
    got = _feature_samples(text)
    want = {name: ("" if g["stage"] == "GA" else g["stage"], 1.0 if g["default"] else 0.0) for name, g in table.items()}
    assert got == want


async def test_metrics_report_the_overrides_of_flags_and_profile():
    async with running_server(
        components=False,
        cluster={"name": "p", "featureGates": {"DRAExtendedResource": False}},
        feature_gates="DRAListTypeAttributes=true",
    ) as server:
        _, text = await _get(server.url, "/metrics")
    got = _feature_samples(text)
    assert got["DRAExtendedResource"] == ("BETA", 0.0)
    assert got["DRAListTypeAttributes"] == ("ALPHA", 1.0)
    assert got["DRANodeAllocatableResources"] == ("ALPHA", 0.0)  # not the demo profile: v1.36's default
    assert got["DynamicResourceAllocation"] == ("", 1.0)


async def test_device_taint_rules_are_not_served_by_default():
    async with running_server(components=False) as server:
        st, _ = await _get(server.url, "/apis/resource.k8s.io/v1beta2/devicetaintrules")
        assert st == 404
        st, group = await _get(server.url, "/apis/resource.k8s.io")
        assert [v["version"] for v in group["versions"]] == ["v1"]
        st, index = await _get(server.url, "/openapi/v3")
        assert "apis/resource.k8s.io/v1" in index["paths"]
        assert "apis/resource.k8s.io/v1beta2" not in index["paths"]
        st, _ = await _get(server.url, "/openapi/v3/apis/resource.k8s.io/v1beta2")
        assert st == 404


async def test_device_taint_rules_served_with_their_gate_and_api_version():
    async with running_server(components=False, **TAINT_RULES) as server:
        st, body = await _get(server.url, "/apis/resource.k8s.io/v1beta2/devicetaintrules")
        assert st == 200 and body["kind"] == "DeviceTaintRuleList"
        _, index = await _get(server.url, "/openapi/v3")
        assert "apis/resource.k8s.io/v1beta2" in index["paths"]
    # the API version alone is not enough: the resource's gate is off
    async with running_server(components=False, runtime_config="resource.k8s.io/v1beta2=true") as server:
        st, _ = await _get(server.url, "/apis/resource.k8s.io/v1beta2/devicetaintrules")
        assert st == 404


async def test_a_disabled_features_fields_are_dropped_on_create():
    async with running_server(
        components=False, feature_gates={"DRADeviceTaints": False, "DRAExtendedResource": False}
    ) as server:
        st, made = await _post(
            server.url,
            "/apis/resource.k8s.io/v1/deviceclasses",
            {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": "example.com/gpu"}},
        )
        assert st == 201 and "extendedResourceName" not in made["spec"]
        st, made = await _post(
            server.url,
            "/apis/resource.k8s.io/v1/resourceslices",
            {
                "metadata": {"name": "s"},
                "spec": {
                    "driver": "gpu.example.com",
                    "nodeName": "n",
                    "pool": {"name": "p", "resourceSliceCount": 1},
                    "devices": [{"name": "d", "taints": [{"key": "k", "effect": "NoSchedule"}]}],
                },
            },
        )
        assert st == 201, made
        assert made["spec"]["devices"] == [{"name": "d"}]


async def test_a_request_list_is_rejected_with_prioritized_list_off():
    async with running_server(components=False, feature_gates={"DRAPrioritizedList": False}) as server:
        st, body = await _post(
            server.url,
            "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims",
            {
                "metadata": {"name": "c"},
                "spec": {
                    "devices": {"requests": [{"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "x"}]}]}
                },
            },
        )
    assert st == 422, body
    assert body["reason"] == "Invalid"
    assert "spec.devices.requests[0]" in body["message"]


GROUPED_POD = {
    "metadata": {"name": "member"},
    "spec": {"containers": [{"name": "c", "image": "busybox"}], "schedulingGroup": {"podGroupName": "gang"}},
}
LISTED_SLICE = {
    "metadata": {"name": "numa"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "n",
        "pool": {"name": "p", "resourceSliceCount": 1},
        "devices": [{"name": "d", "attributes": {"numa": {"ints": [0, 1]}, "model": {"string": "a100"}}}],
    },
}


async def _post_grouped_deployment(url: str) -> tuple[int, dict]:
    template = {"metadata": {"labels": {"app": "g"}}, "spec": GROUPED_POD["spec"]}
    return await _post(
        url,
        "/apis/apps/v1/namespaces/default/deployments",
        {"metadata": {"name": "g"}, "spec": {"selector": {"matchLabels": {"app": "g"}}, "template": template}},
    )


async def test_scheduling_group_and_list_values_dropped_with_their_gates_off():
    """v1.36's defaults: GenericWorkload and DRAListTypeAttributes are alpha and off."""
    async with running_server(components=False, cluster={"name": "bare"}) as server:
        st, made = await _post(server.url, "/api/v1/namespaces/default/pods", GROUPED_POD)
        assert st == 201, made
        assert "schedulingGroup" not in made["spec"]
        st, made = await _post_grouped_deployment(server.url)
        assert st == 201, made
        assert "schedulingGroup" not in made["spec"]["template"]["spec"]
        # the list value goes; the attribute, left without a value, is then invalid
        st, body = await _post(server.url, "/apis/resource.k8s.io/v1/resourceslices", LISTED_SLICE)
        assert st == 422, body
        assert "spec.devices[0].attributes[numa]" in body["message"], body["message"]


async def test_scheduling_group_and_list_values_kept_with_their_gates_on():
    async with running_server(
        components=False,
        cluster={"name": "bare"},
        feature_gates={"GenericWorkload": True, "DRAListTypeAttributes": True},
    ) as server:
        st, made = await _post(server.url, "/api/v1/namespaces/default/pods", GROUPED_POD)
        assert st == 201, made
        assert made["spec"]["schedulingGroup"] == {"podGroupName": "gang"}
        st, made = await _post_grouped_deployment(server.url)
        assert st == 201 and made["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "gang"}
        st, made = await _post(server.url, "/apis/resource.k8s.io/v1/resourceslices", LISTED_SLICE)
        assert st == 201, made
        assert made["spec"]["devices"][0]["attributes"]["numa"] == {"ints": [0, 1]}


async def test_a_pod_groups_claims_are_dropped_with_workload_resource_claims_off():
    pg = {
        "metadata": {"name": "gang"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        },
    }
    path = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups"
    rc = {"scheduling.k8s.io/v1alpha2": True}
    async with running_server(
        cluster={"name": "bare"}, feature_gates={"GenericWorkload": True}, runtime_config=rc
    ) as s:
        st, made = await _post(s.url, path, pg)
        assert st == 201, made
        assert "resourceClaims" not in made["spec"]
    gates = {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}
    async with running_server(cluster={"name": "bare"}, feature_gates=gates, runtime_config=rc) as s:
        st, made = await _post(s.url, path, pg)
        assert st == 201 and made["spec"]["resourceClaims"] == pg["spec"]["resourceClaims"]
