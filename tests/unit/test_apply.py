"""Server-side apply and managedFields bookkeeping against real schemas."""

import copy

import pytest

from mockkube.machinery import schema as S
from mockkube.machinery.apply import (
    LAST_APPLIED,
    compare,
    merge,
    server_side_apply,
    update_managed_fields,
)
from mockkube.machinery.errors import APIError

CM = S.for_kind("", "v1", "ConfigMap")
POD = S.for_kind("", "v1", "Pod")
DEP = S.for_kind("apps", "v1", "Deployment")
CLAIM = S.for_kind("resource.k8s.io", "v1", "ResourceClaim")
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


def cm(data=None, labels=None, **meta):
    md = {"name": "c", "namespace": "default", **meta}
    if labels is not None:
        md["labels"] = labels
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
    if data is not None:
        obj["data"] = data
    return obj


def apply_cm(live, applied, manager="kubectl", force=False, now=T0):
    return server_side_apply(live, applied, manager, force, "v1", "", CM, now)


def entries(obj):
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in obj["metadata"].get("managedFields", [])]


def test_apply_create():
    out = apply_cm(None, cm({"k": "v"}))
    assert out["data"] == {"k": "v"}
    assert out["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}},
        }
    ]


def test_reapply_same_is_noop_and_keeps_time():
    live = apply_cm(None, cm({"k": "v"}))
    again = apply_cm(live, cm({"k": "v"}), now=T1)
    assert again == live


def test_second_manager_different_value_conflicts():
    live = apply_cm(None, cm({"k": "v"}))
    with pytest.raises(APIError) as ei:
        apply_cm(live, cm({"k": "other"}), manager="other")
    e = ei.value
    assert (e.code, e.reason) == (409, "Conflict")
    assert e.message == 'Apply failed with 1 conflict: conflict with "kubectl": .data.k'
    assert e.details == {
        "causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "kubectl"', "field": ".data.k"}]
    }
    assert e.status()["details"]["causes"][0]["reason"] == "FieldManagerConflict"


def test_several_conflicts_message():
    live = apply_cm(None, cm({"a": "1", "b": "2"}))
    with pytest.raises(APIError) as ei:
        apply_cm(live, cm({"a": "x", "b": "y"}), manager="other")
    assert ei.value.message == ('Apply failed with 2 conflicts: conflicts with "kubectl":\n- .data.a\n- .data.b')
    assert [c["field"] for c in ei.value.details["causes"]] == [".data.a", ".data.b"]


def test_conflict_with_update_manager_prints_version():
    created = cm({"k": "v"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "kubectl-create", "v1", "", CM, T0)
    with pytest.raises(APIError) as ei:
        apply_cm(created, cm({"k": "x"}))
    assert ei.value.message == 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.k'


def test_same_value_is_co_owned():
    live = apply_cm(None, cm({"k": "v"}))
    out = apply_cm(live, cm({"k": "v"}), manager="other", now=T1)
    # the object did not change, so the new co-owner's entry carries no time, and entries
    # without a time sort first (as upstream)
    assert entries(out) == [("other", "Apply", {"f:data": {"f:k": {}}}), ("kubectl", "Apply", {"f:data": {"f:k": {}}})]
    assert "time" not in out["metadata"]["managedFields"][0]


def test_force_moves_ownership():
    live = apply_cm(None, cm({"k": "v", "j": "w"}))
    out = apply_cm(live, cm({"k": "x"}), manager="other", force=True, now=T1)
    assert out["data"] == {"k": "x", "j": "w"}
    assert entries(out) == [("kubectl", "Apply", {"f:data": {"f:j": {}}}), ("other", "Apply", {"f:data": {"f:k": {}}})]
    assert out["metadata"]["managedFields"][1]["time"] == T1


def test_omitted_field_is_removed_unless_owned_by_another():
    live = apply_cm(None, cm({"a": "1", "b": "2"}))
    out = apply_cm(live, cm({"a": "1"}), now=T1)
    assert out["data"] == {"a": "1"}
    assert out["metadata"]["managedFields"][0]["time"] == T1
    shared = apply_cm(live, cm({"b": "2"}), manager="other", now=T1)
    out2 = apply_cm(shared, cm({"a": "1"}), now=T2)
    assert out2["data"] == {"a": "1", "b": "2"}
    assert entries(out2) == [("other", "Apply", {"f:data": {"f:b": {}}}), ("kubectl", "Apply", {"f:data": {"f:a": {}}})]


def test_removing_last_owned_entry_drops_map():
    live = apply_cm(None, cm({"a": "1"}, labels={"x": "y"}))
    out = apply_cm(live, cm(labels={"x": "y"}), now=T1)
    assert "data" not in out
    assert out["metadata"]["labels"] == {"x": "y"}


def test_fields_written_by_update_survive_omission():
    created = cm({"a": "1"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "kubectl-create", "v1", "", CM, T0)
    out = apply_cm(created, cm({"b": "2"}), now=T1)
    assert out["data"] == {"a": "1", "b": "2"}


@pytest.mark.parametrize(
    "applied,message",
    [
        ({**cm(), "kind": "Secret"}, "invalid object type: /v1, Kind=Secret"),
        ({**cm(), "apiVersion": "v2"}, "invalid object type: /v2, Kind=ConfigMap"),
        (cm(managedFields=[]), "metadata.managedFields must be nil"),
    ],
)
def test_apply_rejects_bad_object(applied, message):
    with pytest.raises(APIError) as ei:
        apply_cm(None, applied)
    assert (ei.value.code, ei.value.message) == (400, message)


def test_apply_to_untracked_object_attributes_existing_fields_to_before_first_apply():
    live = cm({"a": "1"})
    out = apply_cm(live, cm({"b": "2"}), now=T1)
    assert entries(out) == [
        ("kubectl", "Apply", {"f:data": {"f:b": {}}}),
        ("before-first-apply", "Update", {"f:data": {".": {}, "f:a": {}}}),
    ]


def test_update_tracks_changes_and_takes_them_from_others():
    created = cm({"a": "1", "b": "2"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "kubectl-create", "v1", "", CM, T0)
    assert entries(created) == [("kubectl-create", "Update", {"f:data": {".": {}, "f:a": {}, "f:b": {}}})]
    edited = copy.deepcopy(created)
    edited["data"]["a"] = "changed"
    mf = update_managed_fields(created, edited, "kubectl-edit", "v1", "", CM, T1)
    assert [(e["manager"], e["time"], e["fieldsV1"]) for e in mf] == [
        ("kubectl-create", T0, {"f:data": {".": {}, "f:b": {}}}),
        ("kubectl-edit", T1, {"f:data": {"f:a": {}}}),
    ]


def test_update_without_change_keeps_entries():
    created = cm({"a": "1"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "kubectl-create", "v1", "", CM, T0)
    assert (
        update_managed_fields(created, copy.deepcopy(created), "kubectl-edit", "v1", "", CM, T1)
        == created["metadata"]["managedFields"]
    )


def test_update_of_untracked_object_stays_untracked():
    assert update_managed_fields(cm({"a": "1"}), cm({"a": "2"}), "x", "v1", "", CM, T0) == []


def test_status_subresource_gets_its_own_entry_and_reset_fields():
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "i"}]},
        "status": {"phase": "Pending"},
    }
    mf = update_managed_fields(None, pod, "kubectl-create", "v1", "", POD, T0, reset_fields=["status"])
    assert mf[0]["fieldsV1"] == {"f:spec": {"f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}, "f:name": {}}}}}
    pod["metadata"]["managedFields"] = mf
    running = copy.deepcopy(pod)
    running["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    mf2 = update_managed_fields(pod, running, "kubelet", "v1", "status", POD, T1, reset_fields=["spec"])
    assert [(e["manager"], e.get("subresource"), e["fieldsV1"]) for e in mf2] == [
        ("kubectl-create", None, mf[0]["fieldsV1"]),
        ("kubelet", "status", {"f:status": {"f:phase": {}, "f:podIP": {}}}),
    ]


def test_client_written_managed_fields_are_taken_as_given():
    # helm/kubectl CSA→SSA migration: a JSON patch rewrites managedFields only.
    created = cm({"a": "1"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "helm", "v1", "", CM, T0)
    migrated = copy.deepcopy(created)
    migrated["metadata"]["managedFields"] = [
        {
            "manager": "helm",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    mf = update_managed_fields(created, migrated, "helm", "v1", "", CM, T1)
    assert mf == migrated["metadata"]["managedFields"]
    # and a later SSA by helm that drops "a" now prunes it
    migrated["metadata"]["managedFields"] = mf
    out = server_side_apply(migrated, cm({"b": "2"}), "helm", False, "v1", "", CM, T2)
    assert out["data"] == {"b": "2"}


@pytest.mark.parametrize("reset", [[], [{}]])
def test_empty_managed_fields_in_request_resets(reset):
    created = cm({"a": "1"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "x", "v1", "", CM, T0)
    cleared = copy.deepcopy(created)
    cleared["metadata"]["managedFields"] = reset
    assert update_managed_fields(created, cleared, "x", "v1", "", CM, T1) == []


def test_subresource_ignores_request_managed_fields():
    created = cm({"a": "1"})
    created["metadata"]["managedFields"] = update_managed_fields(None, created, "x", "v1", "", CM, T0)
    req = copy.deepcopy(created)
    req["metadata"]["managedFields"] = []
    assert update_managed_fields(created, req, "x", "v1", "status", CM, T1) == created["metadata"]["managedFields"]


def test_update_managers_capped_at_ten():
    obj = cm({})
    obj["metadata"]["managedFields"] = []
    for i in range(12):
        new = copy.deepcopy(obj)
        new["data"][f"k{i}"] = "v"
        new["metadata"]["managedFields"] = update_managed_fields(
            None if i == 0 else obj, new, f"m{i}", "v1", "", CM, f"2026-01-01T00:00:{i:02d}Z"
        )
        obj = new
    names = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(names) == 10 and names[0] == "ancient-changes"
    assert obj["metadata"]["managedFields"][0]["fieldsV1"]["f:data"].keys() >= {"f:k0", "f:k1", "f:k2"}


def deployment(image="nginx:1", replicas=None, extra_container=False):
    containers = [{"name": "a", "image": image}]
    if extra_container:
        containers.append({"name": "b", "image": "busybox"})
    spec = {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": containers}},
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec}


def apply_dep(live, applied, manager="kubectl", force=False, now=T0):
    return server_side_apply(live, applied, manager, force, "apps/v1", "", DEP, now)


def test_deployment_containers_merge_by_name_with_nested_conflict_path():
    live = apply_dep(None, deployment(extra_container=True))
    sidecar = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "envoy"}]}}},
    }
    out = apply_dep(live, sidecar, manager="mesh", now=T1)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["a", "b", "c"]
    bad = copy.deepcopy(sidecar)
    bad["spec"]["template"]["spec"]["containers"] = [{"name": "a", "image": "hijack"}]
    with pytest.raises(APIError) as ei:
        apply_dep(out, bad, manager="mesh", now=T2)
    assert ei.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl": .spec.template.spec.containers[name="a"].image'
    )


def test_deployment_dropping_container_prunes_it():
    live = apply_dep(None, deployment(extra_container=True))
    out = apply_dep(live, deployment(), now=T1)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["a"]


def test_kubectl_edit_then_apply_replicas_conflict_and_force():
    live = apply_dep(None, deployment(replicas=2))
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    scaled["metadata"]["managedFields"] = update_managed_fields(live, scaled, "kubectl-edit", "apps/v1", "", DEP, T1)
    with pytest.raises(APIError) as ei:
        apply_dep(scaled, deployment(replicas=2), now=T2)
    assert ei.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas'
    )
    out = apply_dep(scaled, deployment(replicas=2), force=True, now=T2)
    assert out["spec"]["replicas"] == 2
    assert [e["manager"] for e in out["metadata"]["managedFields"]] == ["kubectl"]


def test_atomic_selector_replaced_whole():
    live = apply_dep(None, deployment())
    new = deployment()
    new["spec"]["selector"] = {"matchLabels": {"tier": "x"}}
    out = apply_dep(live, new, now=T1)
    assert out["spec"]["selector"] == {"matchLabels": {"tier": "x"}}


def test_resource_claim_status_devices_merge_by_key():
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "rc"},
        "status": {"devices": [{"driver": "d", "pool": "p", "device": "g0", "data": {"x": 1}}]},
    }
    live = server_side_apply(None, claim, "driver-a", False, "resource.k8s.io/v1", "status", CLAIM, T0)
    other = copy.deepcopy(claim)
    other["status"]["devices"] = [{"driver": "d2", "pool": "p", "device": "f0"}]
    out = server_side_apply(live, other, "driver-b", False, "resource.k8s.io/v1", "status", CLAIM, T1)
    assert [d["device"] for d in out["status"]["devices"]] == ["g0", "f0"]
    assert [(e["manager"], e["subresource"]) for e in out["metadata"]["managedFields"]] == [
        ("driver-a", "status"),
        ("driver-b", "status"),
    ]


def test_kubectl_last_applied_migration_overrides_csa_conflicts_and_updates_annotation():
    applied = cm({"k": "v"})
    live = copy.deepcopy(applied)
    live["metadata"]["annotations"] = {
        LAST_APPLIED: '{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap",'
        '"metadata":{"name":"c","namespace":"default"}}\n'
    }
    live["metadata"]["managedFields"] = update_managed_fields(None, live, "kubectl-client-side-apply", "v1", "", CM, T0)
    new = cm({"k": "v2"})
    out = apply_cm(live, new, now=T1)
    assert out["data"] == {"k": "v2"}
    assert out["metadata"]["annotations"][LAST_APPLIED] == (
        '{"apiVersion":"v1","data":{"k":"v2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}\n'
    )
    with pytest.raises(APIError):  # any other manager still conflicts
        apply_cm(live, new, manager="other", now=T1)


def test_compare_and_merge_primitives():
    c = compare({"data": {"a": "1", "b": "2"}}, {"data": {"a": "x", "c": "3"}}, CM)
    as_str = lambda s: sorted(".".join(pe[1] for pe in p) for p in s)  # noqa: E731
    assert (as_str(c.added), as_str(c.modified), as_str(c.removed)) == (["data.c"], ["data.a"], ["data.b"])
    assert merge({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b"]}}, CM) == {
        "metadata": {"finalizers": ["a", "b"]}
    }
