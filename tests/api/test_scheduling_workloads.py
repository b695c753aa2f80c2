"""scheduling.k8s.io/v1alpha2 Workloads and PodGroups over HTTP: served only while
GenericWorkload is on, validated as upstream's ``pkg/apis/scheduling/validation`` (its
TestValidateWorkload, TestValidateWorkloadUpdate, TestValidatePodGroup and
TestValidatePodGroupUpdate tables, case by case, against the v1alpha2 wire form), spec
immutable, status a subresource."""

from __future__ import annotations

import copy

import aiohttp
import pytest

from mockkube.testing.cluster import running_server

GATES = {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}
BASE = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default"


def mk_workload(**over) -> dict:
    w = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "Workload",
        "metadata": {"name": "workload"},
        "spec": {
            "controllerRef": {"apiGroup": "group", "kind": "foo", "name": "baz"},
            "podGroupTemplates": [
                {"name": "group1", "schedulingPolicy": {"basic": {}}},
                {"name": "group2", "schedulingPolicy": {"gang": {"minCount": 2}}},
            ],
        },
    }
    for path, value in over.items():
        _set(w, path, value)
    return w


def mk_pod_group(**over) -> dict:
    pg = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "workload"},
        "spec": {
            "podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t1"}},
            "schedulingPolicy": {"gang": {"minCount": 5}},
        },
    }
    for path, value in over.items():
        _set(pg, path, value)
    return pg


_DELETE = object()


def _set(obj: dict, path: str, value) -> None:
    parts = path.split("__")
    for p in parts[:-1]:
        obj = obj[int(p)] if isinstance(obj, list) else obj[p]
    last = parts[-1]
    if isinstance(obj, list):
        obj[int(last)] = value
    elif value is _DELETE:
        obj.pop(last, None)
    else:
        obj[last] = value


SUBDOMAIN = "a lowercase RFC 1123 subdomain"
TOO_MANY = [{"name": f"group-{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)]

WORKLOAD_FAILURES = [
    ("invalid name", {"metadata__name": ".workload"}, [("FieldValueInvalid", "metadata.name")]),
    ("too long name", {"metadata__name": "w" * 254}, [("FieldValueInvalid", "metadata.name")]),
    (
        "too long controllerRef apiGroup",
        {"spec__controllerRef__apiGroup": "g" * 254},
        [("FieldValueInvalid", "spec.controllerRef.apiGroup")],
    ),
    (
        "no pod group name",
        {"spec__podGroupTemplates__0__name": ""},
        [("FieldValueRequired", "spec.podGroupTemplates[0].name")],
    ),
    (
        "two policies",
        {"spec__podGroupTemplates__0__schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}},
        [("FieldValueInvalid", "spec.podGroupTemplates[0].schedulingPolicy")],
    ),
    (
        "zero min count in gang",
        {"spec__podGroupTemplates__1__schedulingPolicy": {"gang": {"minCount": 0}}},
        [("FieldValueRequired", "spec.podGroupTemplates[1].schedulingPolicy.gang.minCount")],
    ),
    (
        "negative min count in gang",
        {"spec__podGroupTemplates__1__schedulingPolicy": {"gang": {"minCount": -1}}},
        [("FieldValueInvalid", "spec.podGroupTemplates[1].schedulingPolicy.gang.minCount")],
    ),
    (
        "two pod groups with the same name",
        {"spec__podGroupTemplates__1__name": "group1"},
        [("FieldValueDuplicate", "spec.podGroupTemplates[1]")],
    ),
    (
        "invalid controllerRef apiGroup",
        {"spec__controllerRef__apiGroup": ".group"},
        [("FieldValueInvalid", "spec.controllerRef.apiGroup")],
    ),
    ("no controllerRef kind", {"spec__controllerRef__kind": ""}, [("FieldValueRequired", "spec.controllerRef.kind")]),
    (
        "invalid controllerRef kind",
        {"spec__controllerRef__kind": "/foo"},
        [("FieldValueInvalid", "spec.controllerRef.kind")],
    ),
    ("no controllerRef name", {"spec__controllerRef__name": ""}, [("FieldValueRequired", "spec.controllerRef.name")]),
    (
        "invalid controllerRef name",
        {"spec__controllerRef__name": "/baz"},
        [("FieldValueInvalid", "spec.controllerRef.name")],
    ),
    ("no pod groups", {"spec__podGroupTemplates": []}, [("FieldValueRequired", "spec.podGroupTemplates")]),
    (
        "too many pod group templates",
        {"spec__podGroupTemplates": TOO_MANY},
        [("FieldValueTooMany", "spec.podGroupTemplates")],
    ),
    (
        "no policy set",
        {"spec__podGroupTemplates__0__schedulingPolicy": {}},
        [("FieldValueInvalid", "spec.podGroupTemplates[0].schedulingPolicy")],
    ),
    # KEP-5729: a template's resourceClaims, as a pod's
    (
        "claim with both sources",
        {
            "spec__podGroupTemplates__0__resourceClaims": [
                {"name": "c", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}
            ]
        },
        [("FieldValueInvalid", "spec.podGroupTemplates[0].resourceClaims[0]")],
    ),
]

WORKLOAD_UPDATE_FAILURES = [
    ("change pod group name", {"spec__podGroupTemplates__0__name": "group1bar"}),
    (
        "add pod group",
        {
            "spec__podGroupTemplates": mk_workload()["spec"]["podGroupTemplates"]
            + [{"name": "group3", "schedulingPolicy": {"basic": {}}}]
        },
    ),
    ("delete pod group", {"spec__podGroupTemplates": mk_workload()["spec"]["podGroupTemplates"][:1]}),
    ("change gang min count", {"spec__podGroupTemplates__1__schedulingPolicy": {"gang": {"minCount": 5}}}),
    ("change controllerRef", {"spec__controllerRef__kind": "foobar"}),
    ("delete controllerRef", {"spec__controllerRef": _DELETE}),
]

POD_GROUP_FAILURES = [
    ("invalid name", {"metadata__name": ".podGroup"}, [("FieldValueInvalid", "metadata.name")]),
    ("too long name", {"metadata__name": "w" * 254}, [("FieldValueInvalid", "metadata.name")]),
    (
        "zero min count in gang",
        {"spec__schedulingPolicy": {"gang": {"minCount": 0}}},
        [("FieldValueRequired", "spec.schedulingPolicy.gang.minCount")],
    ),
    (
        "negative minCount in gang",
        {"spec__schedulingPolicy": {"gang": {"minCount": -1}}},
        [("FieldValueInvalid", "spec.schedulingPolicy.gang.minCount")],
    ),
    (
        "multiple policies set",
        {"spec__schedulingPolicy": {"gang": {"minCount": 5}, "basic": {}}},
        [("FieldValueInvalid", "spec.schedulingPolicy")],
    ),
    ("no policy set", {"spec__schedulingPolicy": {}}, [("FieldValueInvalid", "spec.schedulingPolicy")]),
    (
        "too long podGroupTemplateRef workload name",
        {"spec__podGroupTemplateRef__workload__workloadName": "g" * 254},
        [("FieldValueInvalid", "spec.podGroupTemplateRef.workload.workloadName")],
    ),
    (
        "invalid podGroupTemplateRef workload name",
        {"spec__podGroupTemplateRef__workload__workloadName": ".workload"},
        [("FieldValueInvalid", "spec.podGroupTemplateRef.workload.workloadName")],
    ),
    (
        "too long podGroupTemplateRef kind",
        {"spec__podGroupTemplateRef__workload__podGroupTemplateName": "g" * 254},
        [("FieldValueInvalid", "spec.podGroupTemplateRef.workload.podGroupTemplateName")],
    ),
    (
        "invalid podGroupTemplateRef name",
        {"spec__podGroupTemplateRef__workload__podGroupTemplateName": "/baz"},
        [("FieldValueInvalid", "spec.podGroupTemplateRef.workload.podGroupTemplateName")],
    ),
    (
        "claim with no source",
        {"spec__resourceClaims": [{"name": "gpu"}]},
        [("FieldValueInvalid", "spec.resourceClaims[0]")],
    ),
    (
        "duplicate claim names",
        {
            "spec__resourceClaims": [
                {"name": "gpu", "resourceClaimName": "a"},
                {"name": "gpu", "resourceClaimName": "b"},
            ]
        },
        [("FieldValueDuplicate", "spec.resourceClaims[1].name")],
    ),
]

POD_GROUP_FAILURES.append(
    (
        "too many claims",
        {"spec__resourceClaims": [{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)]},
        [("FieldValueTooMany", "spec.resourceClaims")],
    )
)

POD_GROUP_UPDATE_FAILURES = [
    (
        "change podGroup template ref name",
        {"spec__podGroupTemplateRef__workload__podGroupTemplateName": "new-template"},
    ),
    (
        "change podGroup template ref workload name",
        {"spec__podGroupTemplateRef__workload__workloadName": "new-workload"},
    ),
    ("delete podGroup template ref", {"spec__podGroupTemplateRef": _DELETE}),
    ("change gang min count", {"spec__schedulingPolicy": {"gang": {"minCount": 10}}}),
    ("change scheduling policy", {"spec__schedulingPolicy": {"basic": {}}}),
    ("add resource claims", {"spec__resourceClaims": [{"name": "gpu", "resourceClaimName": "a"}]}),
]


@pytest.fixture
async def api():
    async with running_server(feature_gates=GATES, runtime_config={"scheduling.k8s.io/v1alpha2": True}) as server:
        async with aiohttp.ClientSession() as s:
            from tests.api.conftest import Api

            yield Api(s, server.url, server)


def causes(body: dict) -> list[tuple[str, str]]:
    return [(c["reason"], c["field"]) for c in body["details"]["causes"]]


async def test_served_only_behind_generic_workload():
    async with running_server() as server:  # v1.36's default: GenericWorkload off
        async with aiohttp.ClientSession() as s:
            async with s.get(server.url + "/apis/scheduling.k8s.io/v1alpha2") as r:
                assert r.status == 404
            async with s.get(server.url + "/apis/scheduling.k8s.io/v1") as r:
                assert r.status == 200


async def test_discovery(api):
    status, body, _ = await api.get("/apis/scheduling.k8s.io/v1alpha2")
    assert status == 200
    got = {r["name"]: (r["kind"], r["namespaced"]) for r in body["resources"]}
    assert got == {
        "workloads": ("Workload", True),
        "podgroups": ("PodGroup", True),
        "podgroups/status": ("PodGroup", True),
    }


async def test_workload_validation_table(api):
    status, body, _ = await api.post(f"{BASE}/workloads", mk_workload())
    assert status == 201, body
    for i, (name, over, want) in enumerate(WORKLOAD_FAILURES):
        w = mk_workload(**over)
        if not over.get("metadata__name"):
            w["metadata"]["name"] = f"bad-{i}"
        status, body, _ = await api.post(f"{BASE}/workloads", w)
        assert status == 422, name
        assert causes(body) == want, name
        assert body["reason"] == "Invalid"
    status, body, _ = await api.get(f"{BASE}/workloads/workload")
    for name, over in WORKLOAD_UPDATE_FAILURES:
        new = copy.deepcopy(body)
        for path, value in over.items():
            _set(new, path, value)
        status, out, _ = await api.put(f"{BASE}/workloads/workload", new)
        assert status == 422, (name, out)
    # controllerRef may be set once when it was not
    w = mk_workload(**{"metadata__name": "late-ref", "spec__controllerRef": _DELETE})
    status, created, _ = await api.post(f"{BASE}/workloads", w)
    assert status == 201
    created["spec"]["controllerRef"] = {"kind": "Job", "name": "j"}
    status, out, _ = await api.put(f"{BASE}/workloads/late-ref", created)
    assert status == 200, out


async def test_pod_group_validation_table(api):
    status, body, _ = await api.post(f"{BASE}/podgroups", mk_pod_group())
    assert status == 201, body
    assert "status" not in body or not body["status"].get("conditions")
    for i, (name, over, want) in enumerate(POD_GROUP_FAILURES):
        pg = mk_pod_group(**over)
        if not over.get("metadata__name"):
            pg["metadata"]["name"] = f"bad-{i}"
        status, out, _ = await api.post(f"{BASE}/podgroups", pg)
        assert status == 422, name
        assert causes(out) == want, (name, out)
    for name, over in POD_GROUP_UPDATE_FAILURES:
        new = copy.deepcopy(body)
        for path, value in over.items():
            _set(new, path, value)
        status, out, _ = await api.put(f"{BASE}/podgroups/workload", new)
        assert status == 422, (name, out)
        assert out["details"]["causes"][0]["message"].endswith("field is immutable"), name


async def test_pod_group_status_subresource(api):
    pg = mk_pod_group(**{"spec__resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "tmpl"}]})
    status, body, _ = await api.post(f"{BASE}/podgroups", pg)
    assert status == 201, body
    cond = {
        "type": "PodGroupScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "pod group is unschedulable",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    patch = {"status": {"conditions": [cond], "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "x"}]}}
    status, out, _ = await api.patch(f"{BASE}/podgroups/workload/status", patch)
    assert status == 200, out
    assert out["status"]["conditions"][0]["reason"] == "Unschedulable"
    # the main resource ignores status; a status entry must name a spec.resourceClaims entry
    bad = {"status": {"resourceClaimStatuses": [{"name": "other"}]}}
    status, out, _ = await api.patch(f"{BASE}/podgroups/workload/status", bad)
    assert status == 422
    assert causes(out) == [("FieldValueInvalid", "status.resourceClaimStatuses[0].name")]
    assert out["details"]["causes"][0]["message"].endswith("must match the name of an entry in `spec.resourceClaims`")
    status, out, _ = await api.patch(f"{BASE}/podgroups/workload", {"status": {"conditions": []}})
    assert status == 200 and out["status"]["conditions"][0]["reason"] == "Unschedulable"


async def test_pod_scheduling_group(api):
    pod = {
        "metadata": {"name": "p"},
        "spec": {"schedulingGroup": {"podGroupName": "Bad_Name"}, "containers": [{"name": "c", "image": "i"}]},
    }
    status, out, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert status == 422 and causes(out) == [("FieldValueInvalid", "spec.schedulingGroup.podGroupName")]
    pod["spec"]["schedulingGroup"] = {}
    status, out, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert status == 422 and causes(out) == [("FieldValueInvalid", "spec.schedulingGroup")]
    pod["spec"]["schedulingGroup"] = {"podGroupName": "trainers"}
    status, created, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert status == 201, created
    created["spec"]["schedulingGroup"]["podGroupName"] = "other"  # immutable, as the rest of a pod's spec
    status, out, _ = await api.put("/api/v1/namespaces/default/pods/p", created)
    assert status == 422 and causes(out) == [("FieldValueForbidden", "spec")]
