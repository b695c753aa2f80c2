"""Every verb over HTTP, with upstream status codes and Status shapes."""

from __future__ import annotations

import pytest

CM = "/api/v1/namespaces/default/configmaps"


def cm(name: str, **data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"a": "1"}}


async def test_create_get_list(api):
    st, body, _ = await api.post(CM, cm("one"))
    assert st == 201
    m = body["metadata"]
    assert m["name"] == "one" and m["namespace"] == "default" and m["uid"] and m["creationTimestamp"]
    assert int(m["resourceVersion"]) > 0
    st, got, _ = await api.get(f"{CM}/one")
    assert st == 200 and got == body
    st, lst, _ = await api.get(CM)
    assert st == 200 and lst["kind"] == "ConfigMapList" and lst["apiVersion"] == "v1"
    assert [i["metadata"]["name"] for i in lst["items"]] == ["one"]
    assert int(lst["metadata"]["resourceVersion"]) >= int(m["resourceVersion"])


async def test_generate_name(api):
    st, body, _ = await api.post(CM, {"metadata": {"generateName": "gen-"}, "data": {}})
    assert st == 201
    name = body["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == len("gen-") + 5


async def test_not_found_and_already_exists_shapes(api):
    st, body, headers = await api.get(f"{CM}/nope")
    assert st == 404 and headers["Content-Type"].startswith("application/json")
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'configmaps "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "configmaps"},
        "code": 404,
    }
    await api.post(CM, cm("dup"))
    st, body, _ = await api.post(CM, cm("dup"))
    assert st == 409 and body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "dup" already exists'
    st, body, _ = await api.get("/apis/apps/v1/namespaces/default/deployments/x")
    assert body["message"] == 'deployments.apps "x" not found'


async def test_update_conflict_on_stale_resource_version(api):
    _, created, _ = await api.post(CM, cm("u"))
    fresh = dict(created, data={"a": "2"})
    st, updated, _ = await api.put(f"{CM}/u", fresh)
    assert st == 200 and updated["data"] == {"a": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    stale = dict(created, data={"a": "3"})
    st, body, _ = await api.put(f"{CM}/u", stale)
    assert st == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "u": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    _, now, _ = await api.get(f"{CM}/u")
    assert now["data"] == {"a": "2"}


async def test_unconditional_update_and_noop_keeps_rv(api):
    _, created, _ = await api.post(CM, cm("n"))
    body = dict(created)
    body["metadata"] = {k: v for k, v in created["metadata"].items() if k != "resourceVersion"}
    st, same, _ = await api.put(f"{CM}/n", body)
    assert st == 200 and same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_invalid_is_422_with_causes_and_writes_nothing(api):
    _, before, _ = await api.get(CM)
    st, body, _ = await api.post(CM, cm("Bad_Name"))
    assert st == 422 and body["reason"] == "Invalid" and body["status"] == "Failure"
    assert body["details"]["kind"] == "ConfigMap"
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["message"].startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"')
    _, after, _ = await api.get(CM)
    assert after["items"] == before["items"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_malformed_body_is_400(api):
    st, body, _ = await api.req("POST", CM, raw=b"{not json")
    assert st == 400 and body["reason"] == "BadRequest" and body["kind"] == "Status"
    st, body, _ = await api.req("POST", CM, raw=b"a: [", ct="application/yaml")
    assert st == 400 and body["reason"] == "BadRequest"


async def test_wrong_kind_or_version_is_400(api):
    st, body, _ = await api.post(CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})
    assert st == 400 and "kind" in body["message"]
    st, body, _ = await api.post(CM, {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert st == 400 and "API version" in body["message"]


async def test_unsupported_media_type_and_method(api):
    st, body, _ = await api.req("POST", CM, raw=b"x", ct="text/csv")
    assert st == 415 and body["reason"] == "UnsupportedMediaType"
    st, body, _ = await api.req("PATCH", f"{CM}/x", raw=b"{}", ct="application/json")
    assert st == 415
    st, body, _ = await api.req("POST", f"{CM}/x", raw=b"{}")
    assert st == 405 and body["reason"] == "MethodNotAllowed"


async def test_unknown_path_is_404_status(api):
    st, body, _ = await api.get("/api/v1/namespaces/default/widgets")
    assert st == 404 and body["kind"] == "Status"
    st, body, _ = await api.get("/apis/nope.example.com/v1/things")
    assert st == 404


async def test_patch_types(api):
    await api.post(CM, cm("p", a="1"))
    st, body, _ = await api.patch(f"{CM}/p", {"data": {"b": "2"}})
    assert st == 200 and body["data"] == {"a": "1", "b": "2"}
    st, body, _ = await api.patch(f"{CM}/p", [{"op": "remove", "path": "/data/a"}], ct="application/json-patch+json")
    assert st == 200 and body["data"] == {"b": "2"}
    st, body, _ = await api.patch(
        f"{CM}/p", {"data": {"b": None, "c": "3"}}, ct="application/strategic-merge-patch+json"
    )
    assert st == 200 and body["data"] == {"c": "3"}
    st, body, _ = await api.patch(
        f"{CM}/p", [{"op": "test", "path": "/data/c", "value": "9"}], ct="application/json-patch+json"
    )
    assert st == 422
    st, body, _ = await api.patch(f"{CM}/missing", {"data": {}})
    assert st == 404


async def test_strategic_merge_keys_on_pods(api):
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]},
    }
    st, _, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert st == 201
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "b", "image": "y:2"}],
        }
    }
    st, body, _ = await api.patch(
        "/api/v1/namespaces/default/pods/p", patch, ct="application/strategic-merge-patch+json"
    )
    assert st == 200, body
    assert [(c["name"], c["image"]) for c in body["spec"]["containers"]] == [("a", "x:1"), ("b", "y:2")]


async def test_server_side_apply_conflict_and_force(api):
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": "v1"}}
    st, body, _ = await api.patch(f"{CM}/ssa", obj, ct="application/apply-patch+yaml", params={"fieldManager": "alice"})
    assert st == 201 and body["metadata"]["managedFields"][0]["manager"] == "alice"
    obj["data"]["k"] = "v2"
    st, body, _ = await api.patch(f"{CM}/ssa", obj, ct="application/apply-patch+yaml", params={"fieldManager": "bob"})
    assert st == 409 and body["reason"] == "Conflict"
    assert body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.k"}
    ]
    st, body, _ = await api.patch(
        f"{CM}/ssa", obj, ct="application/apply-patch+yaml", params={"fieldManager": "bob", "force": "true"}
    )
    assert st == 200 and body["data"]["k"] == "v2"
    st, body, _ = await api.patch(f"{CM}/ssa", obj, ct="application/apply-patch+yaml")
    assert st == 422 and body["details"]["causes"][0]["field"] == "fieldManager"


async def test_delete_returns_status_and_pods_return_object(api):
    await api.post(CM, cm("d"))
    st, body, _ = await api.delete(f"{CM}/d", {"propagationPolicy": "Background"})
    assert st == 200 and body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"]["name"] == "d"
    st, _, _ = await api.get(f"{CM}/d")
    assert st == 404
    await api.post(
        "/api/v1/namespaces/default/pods",
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    )
    st, body, _ = await api.delete("/api/v1/namespaces/default/pods/p")
    assert st == 200 and body["kind"] == "Pod"


async def test_finalizers_keep_object_until_removed(api):
    o = cm("f")
    o["metadata"]["finalizers"] = ["example.com/hold"]
    await api.post(CM, o)
    st, body, _ = await api.delete(f"{CM}/f")
    assert st == 202 and body["metadata"]["deletionTimestamp"]
    st, body, _ = await api.get(f"{CM}/f")
    assert st == 200 and body["metadata"]["deletionTimestamp"]
    st, body, _ = await api.patch(f"{CM}/f", {"metadata": {"finalizers": ["example.com/other"]}})
    assert st == 422  # no new finalizers on a terminating object
    st, body, _ = await api.patch(f"{CM}/f", {"metadata": {"finalizers": None}})
    assert st == 200
    st, _, _ = await api.get(f"{CM}/f")
    assert st == 404


async def test_dry_run_writes_nothing(api):
    _, before, _ = await api.get(CM)
    st, body, _ = await api.post(CM, cm("dry"), params={"dryRun": "All"})
    assert st == 201 and body["metadata"]["name"] == "dry"
    st, _, _ = await api.get(f"{CM}/dry")
    assert st == 404
    await api.post(CM, cm("real"))
    st, _, _ = await api.delete(f"{CM}/real", {"dryRun": ["All"]})
    assert st == 200
    st, _, _ = await api.get(f"{CM}/real")
    assert st == 200
    st, body, _ = await api.post(CM, cm("dry2"), params={"dryRun": "Some"})
    assert st == 422


async def test_delete_collection(api):
    for i in range(3):
        o = cm(f"dc{i}")
        o["metadata"]["labels"] = {"grp": "x" if i < 2 else "y"}
        await api.post(CM, o)
    st, body, _ = await api.delete(CM, params={"labelSelector": "grp=x"})
    assert st == 200 and sorted(i["metadata"]["name"] for i in body["items"]) == ["dc0", "dc1"]
    _, lst, _ = await api.get(CM)
    assert [i["metadata"]["name"] for i in lst["items"]] == ["dc2"]


async def test_label_and_field_selectors(api):
    for name, labels in [("a", {"env": "prod", "tier": "1"}), ("b", {"env": "dev"}), ("c", {})]:
        o = cm(name)
        o["metadata"]["labels"] = labels
        await api.post(CM, o)

    async def names(**params):
        st, body, _ = await api.get(CM, params=params)
        assert st == 200, body
        return [i["metadata"]["name"] for i in body["items"]]

    assert await names(labelSelector="env=prod") == ["a"]
    assert await names(labelSelector="env!=prod") == ["b", "c"]
    assert await names(labelSelector="env in (prod,dev)") == ["a", "b"]
    assert await names(labelSelector="env notin (prod)") == ["b", "c"]
    assert await names(labelSelector="tier") == ["a"]
    assert await names(labelSelector="!tier") == ["b", "c"]
    assert await names(fieldSelector="metadata.name=b") == ["b"]
    assert await names(fieldSelector="metadata.name!=b") == ["a", "c"]
    st, body, _ = await api.get(CM, params={"fieldSelector": "spec.nope=x"})
    assert st == 400 and body["reason"] == "BadRequest"
    st, body, _ = await api.get(CM, params={"labelSelector": "env in (prod"})
    assert st == 400


async def test_pod_selectable_fields(api):
    for name, node in [("p1", "n1"), ("p2", "n2"), ("p3", "")]:
        spec = {"containers": [{"name": "c", "image": "i"}]}
        if node:
            spec["nodeName"] = node
        await api.post("/api/v1/namespaces/default/pods", {"metadata": {"name": name}, "spec": spec})
    st, body, _ = await api.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=n2"})
    assert [i["metadata"]["name"] for i in body["items"]] == ["p2"]
    st, body, _ = await api.get("/api/v1/pods", params={"fieldSelector": "status.phase=Pending,spec.nodeName="})
    assert [i["metadata"]["name"] for i in body["items"]] == ["p3"]


async def test_pagination(api):
    for i in range(7):
        await api.post(CM, cm(f"pg{i}"))
    seen = []
    params = {"limit": "3"}
    pages = 0
    while True:
        st, body, _ = await api.get(CM, params=params)
        assert st == 200
        pages += 1
        seen += [i["metadata"]["name"] for i in body["items"]]
        cont = body["metadata"].get("continue")
        if not cont:
            break
        assert body["metadata"]["remainingItemCount"] == 7 - len(seen)
        params = {"limit": "3", "continue": cont}
    assert pages == 3 and seen == [f"pg{i}" for i in range(7)]
    st, body, _ = await api.get(CM, params={"continue": "!!garbage"})
    assert st == 400


async def test_status_subresource_split(api):
    path = "/apis/apps/v1/namespaces/default/deployments"
    d = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
        },
        "status": {"replicas": 5},
    }
    st, body, _ = await api.post(path, d)
    assert st == 201 and "replicas" not in body.get("status", {})
    assert body["metadata"]["generation"] == 1
    body["status"] = {"replicas": 2}
    body["spec"]["replicas"] = 4
    st, upd, _ = await api.put(f"{path}/d/status", body)
    assert st == 200 and upd["status"]["replicas"] == 2 and upd["spec"]["replicas"] == 1
    upd["spec"]["replicas"] = 4
    upd["status"] = {"replicas": 9}
    st, upd2, _ = await api.put(f"{path}/d", upd)
    assert st == 200 and upd2["spec"]["replicas"] == 4 and upd2["status"]["replicas"] == 2
    assert upd2["metadata"]["generation"] == 2
    st, scale, _ = await api.get(f"{path}/d/scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 4 and scale["status"]["selector"] == "a=b"


async def test_namespace_admission(api):
    st, body, _ = await api.post("/api/v1/namespaces/nowhere/configmaps", cm("x"))
    assert st == 404 and body["message"] == 'namespaces "nowhere" not found'


async def test_binding_subresource(api):
    await api.post(
        "/api/v1/namespaces/default/pods",
        {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
    )
    st, body, _ = await api.post(
        "/api/v1/namespaces/default/pods/b/binding",
        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"}, "target": {"kind": "Node", "name": "n1"}},
    )
    assert st == 201
    _, pod, _ = await api.get("/api/v1/namespaces/default/pods/b")
    assert pod["spec"]["nodeName"] == "n1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in pod["status"]["conditions"])
    st, body, _ = await api.post(
        "/api/v1/namespaces/default/pods/b/binding", {"target": {"kind": "Node", "name": "n2"}}
    )
    assert st == 409


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces",
        "/apis/resource.k8s.io/v1/deviceclasses",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        "/apis/events.k8s.io/v1/events",
        "/api/v1/nodes",
        "/api/v1/services",
        "/api/v1/serviceaccounts",
        "/api/v1/secrets",
        "/api/v1/events",
        "/apis/apps/v1/replicasets",
        "/apis/resource.k8s.io/v1/resourceclaims",
        "/apis/resource.k8s.io/v1/resourceclaimtemplates",
        "/apis/resource.k8s.io/v1/resourceslices",
    ],
)
async def test_every_resource_lists(api, path):
    st, body, _ = await api.get(path)
    assert st == 200 and body["kind"].endswith("List") and "resourceVersion" in body["metadata"]


async def test_quantities_are_canonical_and_bad_ones_are_400(api):
    pod = {
        "metadata": {"name": "q"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": "1000m", "memory": "0.5Gi"}, "limits": {"cpu": 2}},
                }
            ]
        },
    }
    st, body, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert st == 201
    res = body["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"cpu": "2"}}
    pod["metadata"]["name"] = "q2"
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    st, body, _ = await api.post("/api/v1/namespaces/default/pods", pod)
    assert st == 400 and "quantities must match the regular expression" in body["message"]


@pytest.mark.parametrize("ns", ["default", "kube-system", "kube-public"])
async def test_system_namespaces_cannot_be_deleted(api, ns):
    st, body, _ = await api.delete(f"/api/v1/namespaces/{ns}")
    assert st == 403 and body["reason"] == "Forbidden"
    assert body["message"] == f'namespaces "{ns}" is forbidden: this namespace may not be deleted'
    st, body, _ = await api.get(f"/api/v1/namespaces/{ns}")
    assert st == 200 and "deletionTimestamp" not in body["metadata"]


async def test_dra_admin_access_needs_the_namespace_label(api):
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "admin"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "all",
                        "exactly": {"deviceClassName": "gpu.example.com", "adminAccess": True, "allocationMode": "All"},
                    }
                ]
            }
        },
    }
    st, body, _ = await api.post("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", claim)
    assert st == 422
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "field": "spec.devices.requests[0].exactly.adminAccess",
            "message": "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` "
            "label on the containing namespace",
        }
    ]
    await api.post(
        "/api/v1/namespaces", {"metadata": {"name": "ops", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    )
    st, body, _ = await api.post("/apis/resource.k8s.io/v1/namespaces/ops/resourceclaims", claim)
    assert st == 201, body
    tpl = {"metadata": {"name": "admin-tpl"}, "spec": {"spec": claim["spec"]}}
    st, body, _ = await api.post("/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", tpl)
    assert st == 422 and body["details"]["causes"][0]["field"] == "spec.spec.devices.requests[0].exactly.adminAccess"


async def test_services_get_cluster_ips_and_node_ports(api):
    st, kube, _ = await api.get("/api/v1/namespaces/default/services/kubernetes")
    assert st == 200 and kube["spec"]["clusterIP"] == "10.96.0.1"
    svc = {
        "metadata": {"name": "web"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    st, body, _ = await api.post("/api/v1/namespaces/default/services", svc)
    assert st == 201
    spec = body["spec"]
    octets = [int(x) for x in spec["clusterIP"].split(".")]
    assert octets[0] == 10 and 96 <= octets[1] <= 111 and spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert 30000 <= spec["ports"][0]["nodePort"] <= 32767 and spec["ports"][0]["targetPort"] == 80
    ip = spec.pop("clusterIP")
    st, upd, _ = await api.put("/api/v1/namespaces/default/services/web", body)
    assert st == 200 and upd["spec"]["clusterIP"] == ip


async def test_put_creates_a_missing_lease_but_not_a_configmap(api):
    lease = {"metadata": {"name": "holder"}, "spec": {"holderIdentity": "me"}}
    st, body, _ = await api.put("/apis/coordination.k8s.io/v1/namespaces/default/leases/holder", lease)
    assert st == 201 and body["spec"]["holderIdentity"] == "me"
    st, body, _ = await api.put("/api/v1/namespaces/default/configmaps/missing", {"metadata": {"name": "missing"}})
    assert st == 404


async def test_namespaces_have_no_deletecollection(api):
    st, body, _ = await api.delete("/api/v1/namespaces")
    assert st == 405 and body["reason"] == "MethodNotAllowed"
    st, body, _ = await api.get("/api/v1/namespaces")
    assert {"default", "kube-system"} <= {i["metadata"]["name"] for i in body["items"]}
