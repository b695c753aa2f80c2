"""resource.k8s.io/v1beta1 and v1beta2 over HTTP: one stored v1 object seen through every
version, with create, get, list, watch, merge/strategic/JSON patch, server-side apply and
the status subresource at the older versions, validation of the converted form, and
discovery."""

from __future__ import annotations

import asyncio
import json

import pytest

from mockkube.testing.cluster import running_server

B1 = "/apis/resource.k8s.io/v1beta1"
B2 = "/apis/resource.k8s.io/v1beta2"
V1 = "/apis/resource.k8s.io/v1"
APPLY = "application/apply-patch+yaml"


@pytest.fixture
async def api():
    """A server serving resource.k8s.io v1beta1 and v1beta2 (off by default in v1.36)."""
    import aiohttp

    from tests.api.conftest import Api

    config = {"resource.k8s.io/v1beta1": True, "resource.k8s.io/v1beta2": True}
    async with running_server(event_window=50, runtime_config=config) as server:
        async with aiohttp.ClientSession() as s:
            yield Api(s, server.url, server)


def _slice_b1(name: str, model: str = "a100") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-a",
            "devices": [
                {
                    "name": "gpu-0",
                    "basic": {
                        "attributes": {"model": {"string": model}},
                        "capacity": {"memory": {"value": "40Gi"}},
                    },
                }
            ],
        },
    }


def _claim_b1(name: str, **request) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", **request}]}},
    }


async def test_slice_written_at_v1beta1_reads_as_v1_and_back(api):
    st, body, _ = await api.post(f"{B1}/resourceslices", _slice_b1("b1-slice"))
    assert st == 201, body
    assert body["apiVersion"] == "resource.k8s.io/v1beta1"
    assert body["spec"]["devices"][0]["basic"]["attributes"] == {"model": {"string": "a100"}}
    # fields are tracked as the version written (upstream records the request's version)
    assert [m["apiVersion"] for m in body["metadata"]["managedFields"]] == ["resource.k8s.io/v1beta1"]
    st, v1, _ = await api.get(f"{V1}/resourceslices/b1-slice")
    assert st == 200
    assert v1["spec"]["devices"] == [
        {"name": "gpu-0", "attributes": {"model": {"string": "a100"}}, "capacity": {"memory": {"value": "40Gi"}}}
    ]
    st, b2, _ = await api.get(f"{B2}/resourceslices/b1-slice")
    assert st == 200 and b2["apiVersion"] == "resource.k8s.io/v1beta2"
    assert b2["spec"] == v1["spec"]
    # the field selectors of v1 work at every version
    st, lst, _ = await api.get(f"{B1}/resourceslices", params={"fieldSelector": "spec.nodeName=node-a"})
    assert st == 200 and lst["apiVersion"] == "resource.k8s.io/v1beta1"
    assert [i["spec"]["devices"][0]["basic"]["attributes"]["model"] for i in lst["items"]] == [{"string": "a100"}]


async def test_slice_written_at_v1_reads_with_the_basic_wrapper(api):
    v1 = _slice_b1("v1-slice")
    v1["apiVersion"] = "resource.k8s.io/v1"
    v1["spec"]["devices"] = [{"name": "gpu-0", "attributes": {"model": {"string": "h100"}}}, {"name": "bare"}]
    st, body, _ = await api.post(f"{V1}/resourceslices", v1)
    assert st == 201, body
    st, b1, _ = await api.get(f"{B1}/resourceslices/v1-slice")
    assert b1["spec"]["devices"] == [
        {"name": "gpu-0", "basic": {"attributes": {"model": {"string": "h100"}}}},
        {"name": "bare", "basic": {}},
    ]
    # a v1beta1 client's read-modify-write round trip keeps the object as it was
    b1["spec"]["devices"][0]["basic"]["attributes"]["model"] = {"string": "h200"}
    st, put, _ = await api.put(f"{B1}/resourceslices/v1-slice", b1)
    assert st == 200, put
    st, again, _ = await api.get(f"{V1}/resourceslices/v1-slice")
    assert again["spec"]["devices"] == [
        {"name": "gpu-0", "attributes": {"model": {"string": "h200"}}},
        {"name": "bare"},
    ]
    assert again["metadata"]["generation"] == 2


async def test_claim_requests_and_exactly(api):
    st, body, _ = await api.post(f"{B1}/namespaces/default/resourceclaims", _claim_b1("c1", count=2))
    assert st == 201, body
    # defaulted as v1 defaults exactly, shown as v1beta1
    assert body["spec"]["devices"]["requests"] == [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}
    ]
    st, v1, _ = await api.get(f"{V1}/namespaces/default/resourceclaims/c1")
    assert v1["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}}
    ]
    # a v1 claim with firstAvailable reads at v1beta1 with an empty deviceClassName
    fa = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c2"},
        "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]}]}},
    }
    st, body, _ = await api.post(f"{V1}/namespaces/default/resourceclaims", fa)
    assert st == 201, body
    st, b1, _ = await api.get(f"{B1}/namespaces/default/resourceclaims/c2")
    assert b1["spec"]["devices"]["requests"] == [
        {
            "name": "r",
            "deviceClassName": "",
            "firstAvailable": [{"name": "a", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}],
        }
    ]


async def test_validation_reports_the_converted_fields(api):
    """Upstream validates the internal (v1) form: a v1beta1 request's fields are named under exactly."""
    bad = _claim_b1("bad", count=3)
    del bad["spec"]["devices"]["requests"][0]["deviceClassName"]
    st, body, _ = await api.post(f"{B1}/namespaces/default/resourceclaims", bad)
    assert st == 422, body
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.devices.requests[0].exactly.deviceClassName"]
    both = _claim_b1("both", firstAvailable=[{"name": "a", "deviceClassName": "gpu"}])
    st, body, _ = await api.post(f"{B1}/namespaces/default/resourceclaims", both)
    assert st == 422, body
    assert "exactly" in body["message"] and "firstAvailable" in body["message"]
    # the body is checked against v1beta1's schema: v1's shape is an unknown field there
    strict = _slice_b1("strict")
    strict["spec"]["devices"][0] = {"name": "gpu-0", "attributes": {}}
    st, body, _ = await api.post(f"{B1}/resourceslices", strict, params={"fieldValidation": "Strict"})
    assert st == 400, body
    assert 'unknown field "spec.devices[0].attributes"' in body["message"]


async def test_patches_at_v1beta1(api):
    st, _, _ = await api.post(f"{B1}/resourceslices", _slice_b1("patched"))
    assert st == 201
    ops = [{"op": "replace", "path": "/spec/devices/0/basic/attributes/model/string", "value": "b200"}]
    st, body, _ = await api.patch(f"{B1}/resourceslices/patched", ops, ct="application/json-patch+json")
    assert st == 200, body
    assert body["spec"]["devices"][0]["basic"]["attributes"]["model"] == {"string": "b200"}
    smp = {"metadata": {"labels": {"tier": "gold"}}, "spec": {"pool": {"generation": 2}}}
    st, body, _ = await api.patch(f"{B1}/resourceslices/patched", smp, ct="application/strategic-merge-patch+json")
    assert st == 200, body
    st, v1, _ = await api.get(f"{V1}/resourceslices/patched")
    assert v1["metadata"]["labels"] == {"tier": "gold"}
    assert v1["spec"]["pool"]["generation"] == 2
    assert v1["spec"]["devices"][0]["attributes"]["model"] == {"string": "b200"}


async def test_server_side_apply_at_v1beta1(api):
    body = json.dumps(_slice_b1("applied"))
    params = {"fieldManager": "old-driver"}
    st, out, _ = await api.req("PATCH", f"{B1}/resourceslices/applied", body, ct=APPLY, params=params)
    assert st == 201, out
    (entry,) = out["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == (
        "old-driver",
        "Apply",
        "resource.k8s.io/v1beta1",
    )
    assert "f:devices" in entry["fieldsV1"]["f:spec"]
    # re-applying with a changed device updates it
    st, out, _ = await api.req(
        "PATCH", f"{B1}/resourceslices/applied", json.dumps(_slice_b1("applied", "h100")), ct=APPLY, params=params
    )
    assert st == 200, out
    st, v1, _ = await api.get(f"{V1}/resourceslices/applied")
    assert v1["spec"]["devices"][0]["attributes"]["model"] == {"string": "h100"}
    # another manager applying the same field at v1 conflicts with the v1beta1 owner
    other = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "applied"},
        "spec": {"driver": "other.example.com"},
    }
    st, out, _ = await api.req(
        "PATCH", f"{V1}/resourceslices/applied", json.dumps(other), ct=APPLY, params={"fieldManager": "intruder"}
    )
    assert st == 409, out
    assert 'conflict with "old-driver"' in out["message"] and ".spec.driver" in out["message"]


async def test_claim_status_at_v1beta1(api):
    st, claim, _ = await api.post(f"{B1}/namespaces/default/resourceclaims", _claim_b1("st"))
    assert st == 201, claim
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool-a", "device": "gpu-0"}]
            }
        }
    }
    claim["spec"]["devices"]["requests"][0]["count"] = 5  # ignored by a status write
    st, body, _ = await api.put(f"{B1}/namespaces/default/resourceclaims/st/status", claim)
    assert st == 200, body
    assert body["apiVersion"] == "resource.k8s.io/v1beta1"
    assert body["spec"]["devices"]["requests"][0]["count"] == 1
    st, v1, _ = await api.get(f"{V1}/namespaces/default/resourceclaims/st")
    assert v1["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    patch = {"status": {"devices": [{"driver": "gpu.example.com", "pool": "pool-a", "device": "gpu-0"}]}}
    st, body, _ = await api.patch(f"{B1}/namespaces/default/resourceclaims/st/status", patch)
    assert st == 200, body
    st, v1, _ = await api.get(f"{V1}/namespaces/default/resourceclaims/st/status")
    assert v1["status"]["devices"] == [{"driver": "gpu.example.com", "pool": "pool-a", "device": "gpu-0"}]


async def test_watch_at_v1beta1_sees_v1_writes_converted(api):
    st, lst, _ = await api.get(f"{B1}/resourceslices")
    rv = lst["metadata"]["resourceVersion"]
    v1 = _slice_b1("watched")
    v1["apiVersion"] = "resource.k8s.io/v1"
    v1["spec"]["devices"] = [{"name": "gpu-0", "attributes": {"model": {"string": "l4"}}}]
    url = f"{api.url}{B1}/resourceslices"
    async with api.s.get(url, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "10"}) as r:
        st, body, _ = await api.post(f"{V1}/resourceslices", v1)
        assert st == 201, body
        line = await asyncio.wait_for(r.content.readline(), 10)
    ev = json.loads(line)
    assert ev["type"] == "ADDED"
    assert ev["object"]["apiVersion"] == "resource.k8s.io/v1beta1"
    assert ev["object"]["spec"]["devices"] == [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "l4"}}}}]


async def test_template_and_class_at_older_versions(api):
    tmpl = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com"}]}}},
    }
    st, body, _ = await api.post(f"{B1}/namespaces/default/resourceclaimtemplates", tmpl)
    assert st == 201, body
    st, v1, _ = await api.get(f"{V1}/namespaces/default/resourceclaimtemplates/t")
    assert v1["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"
    dc = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceClass",
        "metadata": {"name": "b2.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "b2.example.com"'}}]},
    }
    st, body, _ = await api.post(f"{B2}/deviceclasses", dc)
    assert st == 201, body
    st, b1, _ = await api.get(f"{B1}/deviceclasses/b2.example.com")
    assert b1["spec"] == dc["spec"] and b1["apiVersion"] == "resource.k8s.io/v1beta1"


async def test_discovery(api):
    st, group, _ = await api.get("/apis/resource.k8s.io")
    # v1alpha3 (ResourcePoolStatusRequests) is served only with its gate and version turned on
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    st, b1, _ = await api.get(B1)
    names = sorted(r["name"] for r in b1["resources"])
    assert names == [
        "deviceclasses",
        "resourceclaims",
        "resourceclaims/status",
        "resourceclaimtemplates",
        "resourceslices",
    ]
    st, v1, _ = await api.get(V1)
    hashes = {r["name"]: r.get("storageVersionHash") for r in v1["resources"]}
    assert {r["name"]: r.get("storageVersionHash") for r in b1["resources"] if "/" not in r["name"]} == {
        k: v for k, v in hashes.items() if k in names and "/" not in k
    }
