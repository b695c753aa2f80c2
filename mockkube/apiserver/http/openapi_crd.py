"""OpenAPI v3 documents of custom resources, built from their CRDs' schemas.

kube-apiserver publishes one ``/openapi/v3/apis/<group>/<version>`` document per served
custom resource group-version (``apiextensions-apiserver/pkg/controller/openapi/builder``):
the version's schema as a component named by the reversed group
(``com.example.v1.Widget``) with ``x-kubernetes-group-version-kind``, its list, the
metadata types, and the REST paths with their parameters. kubectl reads it for
``explain`` and for client-side field validation. The paths are shaped like a built-in
resource's: the generated Lease document is the template (same parameters, same media
types), renamed for the custom resource.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from mockkube.machinery.registry import Registry, ResourceType
from mockkube.machinery.schema import openapi_dir

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_SCALE = "io.k8s.api.autoscaling.v1.Scale"
_LEASE = "io.k8s.api.coordination.v1.Lease"
_TEMPLATE_NS = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
_TEMPLATE_ALL = "/apis/coordination.k8s.io/v1/leases"


@functools.lru_cache(maxsize=1)
def _template() -> tuple[dict, dict]:
    """(Lease paths, shared components: metadata types and autoscaling/v1 Scale)."""
    base = openapi_dir() / "v3"
    lease = json.loads((base / "apis__coordination.k8s.io__v1.json").read_text())
    apps = json.loads((base / "apis__apps__v1.json").read_text())
    comps = {k: v for k, v in lease["components"]["schemas"].items() if k.startswith(_META)}
    comps.update(
        {
            k: v
            for k, v in apps["components"]["schemas"].items()
            if k.startswith(_META) or k.startswith("io.k8s.api.autoscaling.v1.")
        }
    )
    return lease["paths"], comps


def component_name(group: str, version: str, kind: str) -> str:
    """``com.example.v1.Widget`` for group example.com (upstream reverses the group)."""
    return ".".join(list(reversed(group.split("."))) + [version, kind])


def _gvk_list(group: str, version: str, kind: str) -> list[dict]:
    return [{"group": group, "kind": kind, "version": version}]


def _kind_schema(rt: ResourceType, raw: dict) -> dict:
    sch = copy.deepcopy(raw)
    props = dict(sch.get("properties") or {})
    props["apiVersion"] = {
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object. Servers should convert recognized schemas to the latest internal "
        "value, and may reject unrecognized values. More info: https://git.k8s.io/"
        "community/contributors/devel/sig-architecture/api-conventions.md#resources",
        "type": "string",
    }
    props["kind"] = {
        "description": "Kind is a string value representing the REST resource this object represents. "
        "Servers may infer this from the endpoint the client submits requests to. Cannot "
        "be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/"
        "devel/sig-architecture/api-conventions.md#types-kinds",
        "type": "string",
    }
    props["metadata"] = {
        "allOf": [{"$ref": "#/components/schemas/" + _META + "ObjectMeta"}],
        "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
        "contributors/devel/sig-architecture/api-conventions.md#metadata",
    }
    sch["properties"] = dict(sorted(props.items()))
    sch["type"] = "object"
    sch["x-kubernetes-group-version-kind"] = _gvk_list(rt.group, rt.version, rt.kind)
    return sch


def _list_schema(rt: ResourceType, name: str) -> dict:
    return {
        "description": f"{rt.kind}List is a list of {rt.kind}",
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {
                "description": f"List of {rt.plural}. More info: https://git.k8s.io/community/contributors/"
                f"devel/sig-architecture/api-conventions.md",
                "items": {"$ref": "#/components/schemas/" + name},
                "type": "array",
            },
            "kind": {"type": "string"},
            "metadata": {"allOf": [{"$ref": "#/components/schemas/" + _META + "ListMeta"}]},
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": _gvk_list(rt.group, rt.version, rt.kind + "List"),
    }


def _paths(rt: ResourceType, name: str) -> dict:
    lease_paths, _ = _template()
    prefix = f"/apis/{rt.group}/{rt.version}"
    coll = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    picked = {
        coll: copy.deepcopy(lease_paths[_TEMPLATE_NS]),
        coll + "/{name}": copy.deepcopy(lease_paths[_TEMPLATE_NS + "/{name}"]),
    }
    if rt.namespaced:
        picked[f"{prefix}/{rt.plural}"] = copy.deepcopy(lease_paths[_TEMPLATE_ALL])
    item = picked[coll + "/{name}"]
    for sub in rt.subresources:
        sp = {k: copy.deepcopy(item[k]) for k in ("get", "put", "patch", "parameters") if k in item}
        for op in sp.values():
            if isinstance(op, dict) and sub.name == "scale":
                op["x-kubernetes-group-version-kind"] = {"group": "autoscaling", "kind": "Scale", "version": "v1"}
        text = json.dumps(sp)
        if sub.name == "scale":
            text = text.replace(f'"#/components/schemas/{_LEASE}"', f'"#/components/schemas/{_SCALE}"')
        text = text.replace("the specified Lease", f"{sub.name} of the specified Lease")
        picked[f"{coll}/{{name}}/{sub.name}"] = json.loads(text)
    text = json.dumps(picked)
    text = text.replace(f'"#/components/schemas/{_LEASE}List"', f'"#/components/schemas/{name}List"')
    text = text.replace(f'"#/components/schemas/{_LEASE}"', f'"#/components/schemas/{name}"')
    text = (
        text.replace("CoordinationV1", "")
        .replace("Lease", rt.kind)
        .replace("coordination_v1", f"{rt.group.split('.')[0]}_{rt.version}")
    )
    out = json.loads(text)
    for path_item in out.values():
        if not rt.namespaced and "parameters" in path_item:
            path_item["parameters"] = [p for p in path_item["parameters"] if p.get("name") != "namespace"]
        for op in path_item.values():
            if isinstance(op, dict) and isinstance(op.get("x-kubernetes-group-version-kind"), dict):
                gvk = op["x-kubernetes-group-version-kind"]
                if gvk.get("group") == "coordination.k8s.io":
                    op["x-kubernetes-group-version-kind"] = {"group": rt.group, "kind": rt.kind, "version": rt.version}
            if isinstance(op, dict) and not rt.namespaced:
                op["operationId"] = op.get("operationId", "").replace("Namespaced", "")
    return out


def document(types: list[ResourceType]) -> dict:
    """The v3 document of one custom resource group-version."""
    _, shared = _template()
    comps: dict[str, Any] = dict(shared)
    paths: dict[str, Any] = {}
    for rt in types:
        name = component_name(rt.group, rt.version, rt.kind)
        comps[name] = _kind_schema(rt, rt.strategy.schema)
        comps[name + "List"] = _list_schema(rt, name)
        paths.update(_paths(rt, name))
    rt0 = types[0]
    return {
        "components": {"schemas": dict(sorted(comps.items()))},
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "openapi": "3.0.0",
        "paths": dict(sorted(paths.items())),
        "x-group": rt0.group,
    }


def custom_documents(registry: Registry) -> dict[str, bytes]:
    """``apis/<group>/<version>`` -> document bytes, for every served custom resource."""
    by_gv: dict[tuple[str, str], list[ResourceType]] = {}
    for rt in registry.all():
        if rt.schema is not None:
            by_gv.setdefault((rt.group, rt.version), []).append(rt)
    cache: dict = registry.__dict__.setdefault("_openapi_cache", {})
    out: dict[str, bytes] = {}
    for (g, v), types in sorted(by_gv.items()):
        key = f"apis/{g}/{v}"
        hit = cache.get(key)
        if hit is None or len(hit[0]) != len(types) or any(a is not b for a, b in zip(hit[0], types)):
            doc = document(types)
            doc.pop("x-group", None)
            hit = (tuple(types), json.dumps(doc, separators=(",", ":")).encode())
            cache[key] = hit
        out[key] = hit[1]
    return out
