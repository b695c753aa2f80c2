"""What the dashboard draws (``GET /mockkube/v1/dashboard`` and ``.../dashboard/metrics``,
docs/dashboard.md): consumable capacity in use, unhealthy and tainted devices, claims and
the metrics samples behind the charts. The page itself is tested in chromium
(tests/e2e/test_dashboard_browser.py)."""

from __future__ import annotations

import pytest

SHARED_GPU = """
nodes:
- name: node-a
  capacity: {cpu: "8", memory: 32Gi, pods: "20"}
  drivers:
    gpu.example.com: {count: 2, memory: 80Gi, consumableMemory: true}
"""


def _pod(name: str, memory: str) -> tuple[dict, dict]:
    claim = {
        "metadata": {"name": name},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {"deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": memory}}},
                    }
                ]
            }
        },
    }
    pod = {
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
        },
    }
    return claim, pod


def _devices(body: dict, node: str) -> dict[str, dict]:
    (n,) = [n for n in body["nodes"] if n["name"] == node]
    return {d["name"]: d for p in n["pools"] for d in p["devices"]}


@pytest.mark.mockkube(profile=SHARED_GPU)
def test_consumable_capacity_claims_and_chart_samples(mockkube, mockkube_namespace):
    ns, c = mockkube_namespace, mockkube
    before = c.http.get(c.url + "/mockkube/v1/dashboard/metrics").json()
    for name, memory in (("a", "30Gi"), ("b", "10Gi")):
        claim, pod = _pod(name, memory)
        assert c.http.post(f"{c.url}/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims", json=claim).ok
        assert c.http.post(f"{c.url}/api/v1/namespaces/{ns}/pods", json=pod).ok
        c.wait_for_pod_phase(name, "Running", ns)
    body = c.http.get(c.url + "/mockkube/v1/dashboard").json()
    devices = _devices(body, "node-a")
    shared = [d for d in devices.values() if d["holders"]]
    assert len(shared) == 1, "both claims share one GPU (allowMultipleAllocations)"
    gpu = shared[0]
    assert gpu["state"] == "allocated"
    assert sorted(h["claim"] for h in gpu["holders"]) == [f"{ns}/a", f"{ns}/b"]
    assert gpu["capacity"]["memory"] == {"used": "40Gi", "total": "80Gi", "fraction": 0.5}
    other = next(d for d in devices.values() if d is not gpu)
    assert other["state"] == "free" and other["capacity"]["memory"]["used"] == "0"
    claims = {r["claim"]: r for r in body["claims"]}
    assert claims[f"{ns}/a"]["state"] == "in use" and claims[f"{ns}/a"]["pods"] == ["a"]

    after = c.http.get(c.url + "/mockkube/v1/dashboard/metrics").json()
    assert after["pods"].get("Running", 0) == before["pods"].get("Running", 0) + 2
    assert after["claimsAllocated"] == before["claimsAllocated"] + 2
    assert after["allocations"] >= before["allocations"] + 2
    assert after["attempts"]["scheduled"] >= before["attempts"].get("scheduled", 0) + 2
    assert after["latencyCount"] >= before["latencyCount"] + 2
    assert all(le > 0 for le, _ in after["latencyBuckets"])  # +Inf kept apart: JSON has no infinity


@pytest.mark.mockkube(feature_gates={"DRADeviceTaintRules": True}, runtime_config={"resource.k8s.io/v1beta2": True})
def test_unhealthy_and_tainted_devices(mockkube):
    c = mockkube
    r = c.http.post(
        c.url + "/mockkube/v1/drivers/gpu.example.com/health",
        json={"pool": "gpu-node-0", "device": "gpu-1", "healthy": False},
    )
    assert r.ok, r.text
    rule = {
        "metadata": {"name": "maintenance"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "gpu-node-1", "device": "gpu-2"},
            "taint": {"key": "example.com/maintenance", "effect": "NoSchedule"},
        },
    }
    assert c.http.post(c.url + "/apis/resource.k8s.io/v1beta2/devicetaintrules", json=rule).ok

    def states() -> tuple[str, str, str]:
        body = c.http.get(c.url + "/mockkube/v1/dashboard").json()
        a, b = _devices(body, "gpu-node-0"), _devices(body, "gpu-node-1")
        return a["gpu-1"]["state"], b["gpu-2"]["state"], a["gpu-0"]["state"]

    from mockkube.testing.waiting import until

    seen = until(lambda: (lambda s: s[0] == "unhealthy" and s)(states()), what="the driver republished gpu-1")
    assert seen == ("unhealthy", "tainted", "free")
