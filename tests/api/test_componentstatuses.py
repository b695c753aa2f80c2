"""core/v1 componentstatuses (deprecated, probed rather than stored) and bindings (the
legacy create-only way to bind a pod), as kube-apiserver v1.36 serves them."""

from __future__ import annotations

WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"'
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"


async def test_discovery_lists_bindings_and_componentstatuses(api):
    code, body, _ = await api.get("/api/v1")
    assert code == 200
    by_name = {r["name"]: r for r in body["resources"]}
    assert by_name["bindings"] == {
        "name": "bindings",
        "singularName": "binding",
        "namespaced": True,
        "kind": "Binding",
        "verbs": ["create"],
    }
    assert by_name["componentstatuses"] == {
        "name": "componentstatuses",
        "singularName": "componentstatus",
        "namespaced": False,
        "kind": "ComponentStatus",
        "verbs": ["get", "list"],
        "shortNames": ["cs"],
    }
    code, agg, _ = await api.get(
        "/api", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    )
    res = {r["resource"]: r for r in agg["items"][0]["versions"][0]["resources"]}
    assert res["componentstatuses"]["shortNames"] == ["cs"] and res["componentstatuses"]["scope"] == "Cluster"
    assert res["bindings"]["verbs"] == ["create"] and res["bindings"]["scope"] == "Namespaced"


async def test_list_and_get_are_healthy_with_the_deprecation_warning(api):
    code, body, headers = await api.get("/api/v1/componentstatuses")
    assert code == 200, body
    assert headers.getall("Warning") == [WARNING]
    assert body["kind"] == "ComponentStatusList" and body["metadata"] == {}
    assert sorted(i["metadata"]["name"] for i in body["items"]) == ["controller-manager", "etcd-0", "scheduler"]
    for item in body["items"]:
        assert item["conditions"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
    code, one, headers = await api.get("/api/v1/componentstatuses/etcd-0")
    assert code == 200 and headers.getall("Warning") == [WARNING]
    assert one["kind"] == "ComponentStatus" and one["apiVersion"] == "v1" and one["metadata"]["name"] == "etcd-0"


async def test_table_as_kubectl_prints_it(api):
    code, body, _ = await api.get("/api/v1/componentstatuses", headers={"Accept": TABLE})
    assert code == 200, body
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Status", "Message", "Error"]
    assert sorted(r["cells"] for r in body["rows"]) == [
        ["controller-manager", "Healthy", "ok", ""],
        ["etcd-0", "Healthy", "ok", ""],
        ["scheduler", "Healthy", "ok", ""],
    ]


async def test_selectors_filter_as_upstreams_predicate(api):
    code, body, _ = await api.get("/api/v1/componentstatuses", params={"fieldSelector": "metadata.name=scheduler"})
    assert [i["metadata"]["name"] for i in body["items"]] == ["scheduler"]
    code, body, _ = await api.get("/api/v1/componentstatuses", params={"labelSelector": "tier=control-plane"})
    assert code == 200 and body["items"] == []


async def test_unknown_component_watch_and_writes(api):
    code, body, headers = await api.get("/api/v1/componentstatuses/kubelet")
    assert code == 500  # the REST returns a plain error: reason Unknown (omitted)
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Component not found: kubelet",
        "code": 500,
    }
    assert headers.getall("Warning") == [WARNING]
    code, body, _ = await api.get("/api/v1/componentstatuses", params={"watch": "true"})
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    assert body["message"] == 'watch is not supported on resources of kind "componentstatuses"'
    code, body, _ = await api.post("/api/v1/componentstatuses", {"metadata": {"name": "x"}})
    assert code == 405 and body["reason"] == "MethodNotAllowed"
    code, body, _ = await api.delete("/api/v1/componentstatuses/scheduler")
    assert code == 405


async def test_legacy_bindings_binds_the_named_pod(api):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unbound"},
        "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "busybox"}]},
    }
    assert (await api.post("/api/v1/namespaces/default/pods", pod))[0] == 201
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "unbound"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-x"},
    }
    code, body, _ = await api.post("/api/v1/namespaces/default/bindings", binding)
    assert code == 201, body
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    code, got, _ = await api.get("/api/v1/namespaces/default/pods/unbound")
    assert got["spec"]["nodeName"] == "node-x"
    code, body, _ = await api.post("/api/v1/namespaces/default/bindings", binding)
    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on pods/binding "unbound": pod unbound is already assigned to node "node-x"'
    )
    code, body, _ = await api.get("/api/v1/namespaces/default/bindings")
    assert code == 405
