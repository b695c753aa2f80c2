"""CustomResourceDefinitions over HTTP: serving, schema validation, pruning, defaulting,
CEL rules, subresources, printer columns, versions, deletion and restart."""

from __future__ import annotations

import copy

import aiohttp

from mockkube.testing.cluster import running_server

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
            "categories": ["all", "gadgets"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "selectableFields": [{"jsonPath": ".spec.size"}],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.replicas <= 10",
                                        "message": "at most 10 replicas",
                                        "fieldPath": ".replicas",
                                    },
                                    {"rule": "self.size == oldSelf.size", "message": "size is immutable"},
                                ],
                                "properties": {
                                    "size": {"type": "string", "enum": ["small", "large"]},
                                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                                    "color": {"type": "string", "default": "blue"},
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                                        },
                                    },
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                    "conditions": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {"type": {"type": "string"}, "status": {"type": "string"}},
                                        },
                                    },
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}

BASE = "/apis/example.com/v1/namespaces/default/widgets"


def widget(name: str = "w1", **spec) -> dict:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": "small", **spec},
    }


async def _create_crd(api, crd=None) -> dict:
    st, body, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd or CRD)
    assert st == 201, body
    return body


async def test_crd_is_established_and_served(api):
    created = await _create_crd(api)
    assert "customresourcecleanup.apiextensions.k8s.io" in created["metadata"]["finalizers"]
    st, crd, _ = await api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    conds = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conds["NamesAccepted"]["status"] == "True" and conds["NamesAccepted"]["reason"] == "NoConflicts"
    assert conds["Established"]["reason"] == "InitialNamesAccepted"
    assert crd["status"]["acceptedNames"]["shortNames"] == ["wd"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["names"]["listKind"] == "WidgetList"
    st, rl, _ = await api.get("/apis/example.com/v1")
    widgets = next(r for r in rl["resources"] if r["name"] == "widgets")
    assert widgets["shortNames"] == ["wd"] and widgets["categories"] == ["all", "gadgets"]
    assert {r["name"] for r in rl["resources"]} == {"widgets", "widgets/status", "widgets/scale"}
    st, svc, _ = await api.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com")
    assert svc["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert svc["spec"] == {
        "group": "example.com",
        "version": "v1",
        "groupPriorityMinimum": 1000,
        "versionPriority": 100,
    }
    assert svc["status"]["conditions"][0]["reason"] == "Local"
    st, tbl, _ = await api.get(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "Created At"]
    assert tbl["rows"][0]["cells"] == ["widgets.example.com", crd["metadata"]["creationTimestamp"]]
    st, agg, _ = await api.get(
        "/apis", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    )
    assert any(i["metadata"]["name"] == "example.com" for i in agg["items"])


async def test_create_defaults_prunes_and_validates(api):
    await _create_crd(api)
    st, obj, hdrs = await api.post(
        BASE, {**widget(), "junk": 1, "spec": {"size": "small", "bogus": True, "extra": {"kept": 1}}}
    )
    assert st == 201, obj
    assert obj["spec"] == {"size": "small", "replicas": 1, "color": "blue", "extra": {"kept": 1}}
    assert "junk" not in obj
    assert obj["metadata"]["generation"] == 1
    assert any('unknown field \\"spec.bogus\\"' in w for w in hdrs.getall("Warning", []))
    st, err, _ = await api.post(BASE, widget("w2", size="huge", replicas=-1))
    assert st == 422
    assert err["message"].startswith('Widget.example.com "w2" is invalid: [')
    causes = [(c["field"], c["message"]) for c in err["details"]["causes"]]
    assert ("spec.size", 'Unsupported value: "huge": supported values: "small", "large"') in causes
    assert ("spec.replicas", "Invalid value: -1: spec.replicas in body should be greater than or equal to 0") in causes
    st, err, _ = await api.post(BASE, {**widget("w4"), "metadata": {"name": "w4", "labels": {"a": 5}}})
    assert st == 400 and err["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.metadata.labels of type string"
    )
    st, obj, hdrs = await api.post(BASE, {**widget("w5"), "metadata": {"name": "w5", "bogus": 1}})
    assert st == 201 and "bogus" not in obj["metadata"]
    assert any('unknown field \\"metadata.bogus\\"' in w for w in hdrs.getall("Warning", []))
    st, err, _ = await api.post(BASE, widget("w3", bogus=1), params={"fieldValidation": "Strict"})
    assert st == 400
    assert err["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"'
    )


async def test_cel_rules(api):
    await _create_crd(api)
    st, err, _ = await api.post(BASE, widget(replicas=11))
    assert st == 422
    assert err["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.replicas",
            "message": 'Invalid value: "object": at most 10 replicas',
        }
    ]
    st, obj, _ = await api.post(BASE, widget(replicas=2))
    assert st == 201
    st, err, _ = await api.patch(BASE + "/w1", {"spec": {"size": "large"}})
    assert st == 422 and err["details"]["causes"][0]["message"] == 'Invalid value: "object": size is immutable'


async def test_bad_crds_are_rejected(api):
    bad = copy.deepcopy(CRD)
    bad["metadata"]["name"] = "wrong.example.com"
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"].pop("type")
    bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = [
        {"rule": "self.replicas <"}
    ]
    st, err, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad)
    assert st == 422
    causes = {c["field"]: c["message"] for c in err["details"]["causes"]}
    assert causes["metadata.name"] == 'Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'
    p = "spec.versions[0].schema.openAPIV3Schema.properties[spec]"
    assert causes[p + ".properties[size].type"] == "Required value: must not be empty for specified object fields"
    assert causes[p + ".x-kubernetes-validations[0].rule"].startswith(
        'Invalid value: "self.replicas <": compilation failed: ERROR: <input>:1:'
    )


async def test_crds_with_rules_over_the_cost_limits_are_rejected(api):
    """An unbounded list under a rule that loops over it twice: over the per-rule and the
    per-schema estimated cost limits, in upstream's words."""
    bad = copy.deepcopy(CRD)
    bad["metadata"]["name"] = "costlies.example.com"
    bad["spec"]["names"] = {"plural": "costlies", "singular": "costly", "kind": "Costly", "listKind": "CostlyList"}
    spec = bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["xs"] = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x != y || x == y))"}],
    }
    st, err, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad)
    assert st == 422
    assert err["reason"] == "Invalid"
    causes = [(c["field"], c["message"]) for c in err["details"]["causes"]]
    rule = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[xs].x-kubernetes-validations[0].rule"
    assert (
        rule,
        "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or "
        "adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
    ) in causes
    assert (
        rule,
        "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
    ) in causes
    assert any(
        f == "spec.versions[0].schema.openAPIV3Schema" and "for entire OpenAPIv3 schema exceeds" in m for f, m in causes
    )
    spec["properties"]["xs"]["maxItems"] = 10
    spec["properties"]["xs"]["items"]["maxLength"] = 10
    st, _, _ = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad)
    assert st == 201


async def test_status_scale_and_table(api):
    await _create_crd(api)
    await api.post(BASE, widget(replicas=2))
    st, obj, _ = await api.put(
        BASE + "/w1/status",
        {
            **widget(replicas=2),
            "metadata": {"name": "w1"},
            "status": {"replicas": 2, "selector": "app=w", "conditions": [{"type": "Ready", "status": "True"}]},
        },
    )
    assert st == 200 and obj["status"]["replicas"] == 2
    st, obj, _ = await api.patch(BASE + "/w1", {"status": {"replicas": 9}, "spec": {"color": "red"}})
    assert obj["status"]["replicas"] == 2 and obj["metadata"]["generation"] == 2
    st, scale, _ = await api.get(BASE + "/w1/scale")
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {"replicas": 2, "selector": "app=w"}
    st, scale, _ = await api.patch(BASE + "/w1/scale", {"spec": {"replicas": 3}})
    assert st == 200 and scale["spec"]["replicas"] == 3
    st, tbl, _ = await api.get(BASE, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "Size", "Replicas", "Ready", "Age"]
    assert tbl["rows"][0]["cells"][:4] == ["w1", "small", 3, "True"]
    st, lst, _ = await api.get(BASE, params={"fieldSelector": "spec.size=large"})
    assert lst["items"] == []
    st, lst, _ = await api.get(BASE, params={"fieldSelector": "spec.size=small"})
    assert [i["metadata"]["name"] for i in lst["items"]] == ["w1"]


async def test_server_side_apply_uses_list_map_keys(api):
    await _create_crd(api)
    body = widget(ports=[{"name": "a", "port": 1}])
    st, obj, _ = await api.patch(BASE + "/w1", body, ct="application/apply-patch+yaml", params={"fieldManager": "one"})
    assert st == 201, obj
    st, obj, _ = await api.patch(
        BASE + "/w1",
        widget(ports=[{"name": "b", "port": 2}]),
        ct="application/apply-patch+yaml",
        params={"fieldManager": "two"},
    )
    assert st == 200, obj
    assert obj["spec"]["ports"] == [{"name": "a", "port": 1}, {"name": "b", "port": 2}]
    st, err, _ = await api.patch(BASE + "/w1", {"spec": {}}, ct="application/strategic-merge-patch+json")
    assert st == 415 and err["reason"] == "UnsupportedMediaType"


async def test_versions_and_conversion_none(api):
    crd = copy.deepcopy(CRD)
    v1 = crd["spec"]["versions"][0]
    beta = copy.deepcopy(v1)
    beta.update(name="v1beta1", storage=False)
    alpha = copy.deepcopy(v1)
    alpha.update(name="v1alpha1", storage=False, served=False)
    crd["spec"]["versions"] = [alpha, beta, v1]
    await _create_crd(api, crd)
    st, grp, _ = await api.get("/apis/example.com")
    assert [v["version"] for v in grp["versions"]] == ["v1", "v1beta1"]
    st, _, _ = await api.get("/apis/example.com/v1alpha1")
    assert st == 404
    st, obj, _ = await api.post(
        "/apis/example.com/v1beta1/namespaces/default/widgets", {**widget(), "apiVersion": "example.com/v1beta1"}
    )
    assert st == 201 and obj["apiVersion"] == "example.com/v1beta1"
    stored = api.server.store.get(api.server.registry.get("example.com", "v1", "widgets"), "default", "w1")
    assert stored.obj["apiVersion"] == "example.com/v1"  # kept at the storage version
    st, obj, _ = await api.patch("/apis/example.com/v1beta1/namespaces/default/widgets/w1", {"spec": {"color": "x"}})
    assert st == 200 and obj["apiVersion"] == "example.com/v1beta1" and obj["metadata"]["generation"] == 2, obj
    st, obj, _ = await api.get(BASE + "/w1")
    assert obj["apiVersion"] == "example.com/v1"
    st, lst, _ = await api.get(BASE)
    assert lst["items"][0]["apiVersion"] == "example.com/v1"


async def test_deleting_a_crd_deletes_its_objects():
    async with running_server() as server:
        async with aiohttp.ClientSession() as s:
            from tests.api.conftest import Api

            api = Api(s, server.url, server)
            await _create_crd(api)
            await api.post(BASE, widget())
            st, _, _ = await api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
            assert st in (200, 202)  # the cleanup finalizer has run by the time the response is written
            st, _, _ = await api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
            assert st == 404
            st, _, _ = await api.get(BASE)
            assert st == 404
            st, _, _ = await api.get("/apis/example.com/v1")
            assert st == 404
            st, _, _ = await api.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com")
            assert st == 404
            await _create_crd(api)
            st, lst, _ = await api.get(BASE)
            assert st == 200 and lst["items"] == []


async def test_custom_resources_survive_a_restart(tmp_path):
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    async with running_server(db_url=db) as server:
        async with aiohttp.ClientSession() as s:
            from tests.api.conftest import Api

            api = Api(s, server.url, server)
            await _create_crd(api)
            st, _, _ = await api.post(BASE, widget())
            assert st == 201
    async with running_server(db_url=db) as server:
        async with aiohttp.ClientSession() as s:
            from tests.api.conftest import Api

            api = Api(s, server.url, server)
            st, obj, _ = await api.get(BASE + "/w1")
            assert st == 200 and obj["spec"]["size"] == "small"
            st, obj, _ = await api.post(BASE, widget("w2", size="nope"))
            assert st == 422


async def test_openapi_v3_documents_custom_resources(api):
    await _create_crd(api)
    st, index, _ = await api.get("/openapi/v3")
    url = index["paths"]["apis/example.com/v1"]["serverRelativeURL"]
    st, doc, _ = await api.get(url)
    assert st == 200
    w = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert w["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert w["properties"]["spec"]["properties"]["size"]["enum"] == ["small", "large"]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]
    patch = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "example.com", "kind": "Widget", "version": "v1"}
    scale = doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"]["get"]
    assert scale["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    await api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    st, index, _ = await api.get("/openapi/v3")
    assert "apis/example.com/v1" not in index["paths"]


async def test_watch_and_label_selector(api):
    import json as _json

    await _create_crd(api)
    st, lst, _ = await api.get(BASE)
    rv = lst["metadata"]["resourceVersion"]
    await api.post(BASE, {**widget("a"), "metadata": {"name": "a", "labels": {"tier": "x"}}})
    await api.post(BASE, widget("b"))
    async with api.s.get(api.url + BASE, params={"watch": "1", "resourceVersion": rv, "labelSelector": "tier=x"}) as r:
        line = await r.content.readline()
    ev = _json.loads(line)
    assert ev["type"] == "ADDED" and ev["object"]["metadata"]["name"] == "a"
    assert ev["object"]["apiVersion"] == "example.com/v1"
    st, lst, _ = await api.get(BASE, params={"labelSelector": "tier!=x"})
    assert [i["metadata"]["name"] for i in lst["items"]] == ["b"]


async def test_server_side_apply_of_a_crd(api):
    st, crd, _ = await api.patch(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        CRD,
        ct="application/apply-patch+yaml",
        params={"fieldManager": "kubectl"},
    )
    assert st == 201, crd
    assert crd["metadata"]["managedFields"][0]["manager"] == "kubectl"
    changed = copy.deepcopy(CRD)
    changed["spec"]["names"]["shortNames"] = ["wd", "wdg"]
    st, crd, _ = await api.patch(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        changed,
        ct="application/apply-patch+yaml",
        params={"fieldManager": "kubectl"},
    )
    assert st == 200 and crd["spec"]["names"]["shortNames"] == ["wd", "wdg"]
    st, rl, _ = await api.get("/apis/example.com/v1")
    assert next(r for r in rl["resources"] if r["name"] == "widgets")["shortNames"] == ["wd", "wdg"]


async def test_cluster_scoped_custom_resource(api):
    crd = copy.deepcopy(CRD)
    crd["spec"]["scope"] = "Cluster"
    await _create_crd(api, crd)
    st, obj, _ = await api.post("/apis/example.com/v1/widgets", widget("c1"))
    assert st == 201 and "namespace" not in obj["metadata"]
    st, _, _ = await api.get("/apis/example.com/v1/namespaces/default/widgets")
    assert st == 404
    st, index, _ = await api.get("/openapi/v3")
    st, doc, _ = await api.get(index["paths"]["apis/example.com/v1"]["serverRelativeURL"])
    assert "/apis/example.com/v1/widgets/{name}" in doc["paths"]
    item = doc["paths"]["/apis/example.com/v1/widgets/{name}"]
    assert [p["name"] for p in item["parameters"]] == ["name", "pretty"]
    assert not any("{namespace}" in p for p in doc["paths"])


async def test_crd_waits_for_objects_with_finalizers(api):
    await _create_crd(api)
    await api.post(BASE, {**widget("held"), "metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    st, _, _ = await api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    st, crd, _ = await api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    assert st == 200
    terminating = next(c for c in crd["status"]["conditions"] if c["type"] == "Terminating")
    assert terminating["reason"] == "InstanceDeletionInProgress"
    st, err, _ = await api.post(BASE, widget("new"))
    assert st == 405 and err["message"] == "create not allowed while custom resource definition is terminating"
    st, obj, _ = await api.get(BASE + "/held")
    assert obj["metadata"]["deletionTimestamp"]
    await api.patch(BASE + "/held", {"metadata": {"finalizers": None}})
    st, _, _ = await api.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    assert st == 404
    st, _, _ = await api.get(BASE)
    assert st == 404


async def test_deleting_a_crd_ends_its_watches(api):
    await _create_crd(api)
    async with api.s.get(api.url + BASE, params={"watch": "1"}) as r:
        await api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        assert await r.content.read() == b""  # the stream ends without events


async def test_generation_counts_status_without_a_status_subresource(api):
    crd = copy.deepcopy(CRD)
    v = crd["spec"]["versions"][0]
    v.pop("subresources")
    await _create_crd(api, crd)
    st, obj, _ = await api.post(BASE, {**widget(), "status": {"replicas": 1}})
    assert obj["status"] == {"replicas": 1} and obj["metadata"]["generation"] == 1
    st, obj, _ = await api.patch(BASE + "/w1", {"status": {"replicas": 2}})
    assert obj["metadata"]["generation"] == 2
    st, obj, _ = await api.patch(BASE + "/w1", {"metadata": {"labels": {"a": "b"}}})
    assert obj["metadata"]["generation"] == 2
