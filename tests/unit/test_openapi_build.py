"""The generated OpenAPI documents: what kubectl/helm need from them, and internal consistency."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
V3 = ROOT / "openapi" / "v3"
sys.path.insert(0, str(ROOT / "scripts"))

import build_openapi  # noqa: E402

SERVED = build_openapi.load_served()
METHODS = ("get", "put", "post", "delete", "patch")


def _docs() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted(V3.glob("*.json"))}


DOCS = _docs()
DEFS = json.loads((ROOT / "openapi" / "definitions.json").read_text())["$defs"]


def _ops(doc: dict):
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def test_one_document_per_served_group_version():
    wanted = {build_openapi.gv_filename(r["group"], r["version"]) for r in SERVED}
    assert set(DOCS) == wanted
    assert "api__v1.json" in DOCS and "apis__resource.k8s.io__v1beta2.json" in DOCS


def test_every_patch_has_gvk_field_validation_and_patch_types():
    patches = 0
    for doc in DOCS.values():
        for path, method, op in _ops(doc):
            if method != "patch":
                continue
            patches += 1
            assert op["x-kubernetes-action"] == "patch"
            gvk = op["x-kubernetes-group-version-kind"]
            assert set(gvk) == {"group", "version", "kind"}, path
            names = {(p["name"], p["in"]) for p in op["parameters"]}
            assert {
                ("fieldValidation", "query"),
                ("fieldManager", "query"),
                ("dryRun", "query"),
                ("force", "query"),
            } <= names, path
            assert set(op["requestBody"]["content"]) == set(build_openapi.PATCH_TYPES), path
    # every served resource and every patchable subresource
    served = build_openapi.load_served()
    assert patches == sum(1 for r in served if "patch" in r["verbs"]) + sum(
        1 for r in served for sub in r.get("subresources") or () if "patch" in sub.get("verbs", ())
    )


def test_resource_operations_carry_action_and_gvk():
    for doc in DOCS.values():
        for path, method, op in _ops(doc):
            if path.endswith("/"):  # the APIResourceList discovery endpoint, as upstream
                continue
            assert op["x-kubernetes-action"] in {"get", "list", "post", "put", "patch", "delete", "deletecollection"}, (
                path,
                method,
            )
            assert "kind" in op["x-kubernetes-group-version-kind"], (path, method)


@pytest.mark.parametrize("res", SERVED, ids=lambda r: f"{r['group'] or 'core'}/{r['version']}/{r['kind']}")
def test_each_served_kind_has_a_schema_with_gvk(res):
    doc = DOCS[build_openapi.gv_filename(res["group"], res["version"])]
    want = {"group": res["group"], "version": res["version"], "kind": res["kind"]}
    matches = [
        n for n, s in doc["components"]["schemas"].items() if want in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert len(matches) == 1
    schema = doc["components"]["schemas"][matches[0]]
    assert schema["type"] == "object" and "metadata" in schema["properties"]
    # the JSON-Schema-only enum on apiVersion/kind is gone, the description stays
    assert "enum" not in schema["properties"]["kind"]
    assert schema["properties"]["kind"]["description"]


@pytest.mark.parametrize("res", SERVED, ids=lambda r: f"{r['kind']}.{r['group'] or 'core'}")
def test_each_served_resource_has_all_verbs(res):
    doc = DOCS[build_openapi.gv_filename(res["group"], res["version"])]
    prefix = "/api/" + res["version"] if not res["group"] else f"/apis/{res['group']}/{res['version']}"
    coll = prefix + ("/namespaces/{namespace}/" if res["namespaced"] else "/") + res["plural"]
    actions = {op["x-kubernetes-action"] for p, _, op in _ops(doc) if p in (coll, coll + "/{name}")}
    action_of = {
        "list": "list",
        "create": "post",
        "deletecollection": "deletecollection",
        "get": "get",
        "update": "put",
        "patch": "patch",
        "delete": "delete",
    }
    assert actions == {action_of[v] for v in res["verbs"] if v in action_of}
    if "list" in res["verbs"]:  # create-only kinds (access reviews) have no list
        list_op = doc["paths"][coll]["get"]
        assert "watch" in {p["name"] for p in list_op["parameters"]}
    for sub in res["subresources"]:
        item = doc["paths"][f"{coll}/{{name}}/{sub['name']}"]
        gvk = {
            "group": sub.get("group", res["group"]),
            "version": sub.get("version", res["version"]),
            "kind": sub.get("kind", res["kind"]),
        }
        for verb, method in (("get", "get"), ("update", "put"), ("patch", "patch"), ("create", "post")):
            assert (method in item) == (verb in sub["verbs"]), (sub, method)
            if method in item:
                assert item[method]["x-kubernetes-group-version-kind"] == gvk


def test_scale_eviction_binding_gvks():
    apps = DOCS["apis__apps__v1.json"]["paths"]
    scale = apps["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    core = DOCS["api__v1.json"]["paths"]
    ev = core["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert ev["x-kubernetes-group-version-kind"] == {"group": "policy", "kind": "Eviction", "version": "v1"}
    assert ev["requestBody"]["content"]["*/*"]["schema"]["$ref"].endswith("io.k8s.api.policy.v1.Eviction")


def _refs(node, out):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):  # JSONSchemaProps has a property named "$ref"
            out.add(node["$ref"])
        for v in node.values():
            _refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_v3_refs_resolve_and_no_null_types(name):
    doc = DOCS[name]
    refs: set[str] = set()
    _refs(doc, refs)
    schemas = doc["components"]["schemas"]
    prefix = "#/components/schemas/"
    assert refs and all(r.startswith(prefix) for r in refs)
    missing = {r for r in refs if r[len(prefix) :] not in schemas}
    assert not missing
    text = json.dumps(schemas)
    assert '"null"' not in text
    assert "#/$defs/" not in text


def test_definitions_closed_and_in_json_schema_format():
    refs: set[str] = set()
    _refs(DEFS, refs)
    assert all(r.startswith("#/$defs/") for r in refs)
    assert {r[len("#/$defs/") :] for r in refs} <= set(DEFS)
    pod = DEFS["io.k8s.api.core.v1.Pod"]
    assert pod["type"] == ["object", "null"]  # upstream JSON-Schema form kept for schema.py
    containers = DEFS["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-list-type"] == "map"
    # everything the served kinds need, nothing from unrelated groups
    assert "io.k8s.api.autoscaling.v1.Scale" in DEFS and "io.k8s.api.policy.v1.Eviction" in DEFS
    assert "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler" in DEFS
    assert not any(n.startswith("io.k8s.api.autoscaling.v2beta2.") for n in DEFS)


def test_v3_schema_conversion_keeps_extensions_and_wraps_refs():
    schemas = DOCS["api__v1.json"]["components"]["schemas"]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    meta = schemas["io.k8s.api.core.v1.Pod"]["properties"]["metadata"]
    assert meta["allOf"] == [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert meta["description"]
    assert schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"


def test_explain_target_has_real_docs():
    schemas = DOCS["apis__resource.k8s.io__v1.json"]["components"]["schemas"]
    req = schemas["io.k8s.api.resource.v1.DeviceRequest"]
    assert "exactly" in req["properties"] and "firstAvailable" in req["properties"]
    assert len(req["properties"]["exactly"]["description"]) > 40


def test_build_is_deterministic_and_matches_committed_files():
    with open(build_openapi.source_definitions_path(), encoding="utf-8") as f:
        defs = json.load(f)["$defs"]
    definitions, docs = build_openapi.build(defs, SERVED)
    assert definitions["$defs"] == DEFS
    assert docs == DOCS
