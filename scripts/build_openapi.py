#!/usr/bin/env python
"""Generate the OpenAPI documents mockkube validates against and serves.

Input: the upstream v1.36 JSON-Schema definitions shipped in the ``kubernetes-validate``
package, and ``scripts/served_resources.json`` (the one list of served resources).
Output:

* ``openapi/definitions.json``: ``{"$defs": {...}}``, the upstream definitions (unchanged,
  ``#/$defs/`` refs and ``x-kubernetes-*`` kept) restricted to what the served paths need;
  ``mockkube/machinery/schema.py`` reads it.
* ``openapi/v3/<key>.json``: one OpenAPI 3.0 document per group-version, shaped like
  kube-apiserver's ``/openapi/v3/<api/v1|apis/g/v>`` (every operation with
  ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``; PATCH with the four
  patch media types and ``fieldValidation``), which kubectl and helm need for
  ``--validate=strict``, client-side apply and ``explain``.

Re-runnable and deterministic: ``.venv/bin/python scripts/build_openapi.py``.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVED = ROOT / "scripts" / "served_resources.json"
OUT_DIR = ROOT / "openapi"
K8S_VERSION = "v1.36.0"

_DEFS_REF = "#/$defs/"
_COMPONENTS_REF = "#/components/schemas/"

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STATUS = META + "Status"
DELETE_OPTIONS = META + "DeleteOptions"
PATCH = META + "Patch"
API_RESOURCE_LIST = META + "APIResourceList"
# Not referenced by any path we serve, but part of the watch contract; keep them available.
EXTRA_ROOTS = [META + "WatchEvent", STATUS]

# Upstream serves these with a prose description; kubernetes-validate rewrote them as oneOf.
_SPECIAL_V3 = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "description": "Quantity is a fixed-point representation of a number, serialized as a "
        'string such as "100m", "1Gi" or "2" (a bare JSON number is also accepted).',
        "type": "string",
    },
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string.",
        "format": "int-or-string",
        "type": "string",
    },
}

PATCH_TYPES = [
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
]
_RESPONSE_TYPES = ["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"]
_WATCH_TYPES = [
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
]


def source_definitions_path() -> Path:
    import kubernetes_validate  # noqa: PLC0415 - build-time dependency only

    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    return base / f"{K8S_VERSION}-local" / "_definitions.json"


# -- parameters (as upstream inlines them in v3 documents) --------------------------------


def _q(name: str, typ: str, description: str = "", required: bool = False, where: str = "query") -> dict:
    p: dict[str, Any] = {}
    if description:
        p["description"] = description
    p["in"] = where
    p["name"] = name
    if required:
        p["required"] = True
    p["schema"] = {"type": typ, "uniqueItems": True}
    return p


P = {
    "namespace": _q("namespace", "string", "object name and auth scope, such as for teams and projects", True, "path"),
    "name": lambda kind: _q("name", "string", f"name of the {kind}", True, "path"),
    "pretty": _q(
        "pretty",
        "string",
        "If 'true', then the output is pretty printed. Defaults to "
        "'false' unless the user-agent indicates a browser or command-line HTTP tool "
        "(curl and wget).",
    ),
    "dryRun": _q(
        "dryRun",
        "string",
        "When present, indicates that modifications should not be "
        "persisted. An invalid or unrecognized dryRun directive will result in an error "
        "response and no further processing of the request. Valid values are: - All: all "
        "dry run stages will be processed",
    ),
    "fieldManager": _q(
        "fieldManager",
        "string",
        "fieldManager is a name associated with the actor "
        "or entity that is making these changes. The value must be less than or "
        "128 characters long, and only contain printable characters, as defined by "
        "https://golang.org/pkg/unicode/#IsPrint.",
    ),
    "fieldManagerPatch": _q(
        "fieldManager",
        "string",
        "fieldManager is a name associated with the "
        "actor or entity that is making these changes. The value must be less "
        "than or 128 characters long, and only contain printable characters, as "
        "defined by https://golang.org/pkg/unicode/#IsPrint. This field is "
        "required for apply requests (application/apply-patch) but optional for "
        "non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).",
    ),
    "fieldValidation": _q(
        "fieldValidation",
        "string",
        "fieldValidation instructs the server on how "
        "to handle objects in the request (POST/PUT/PATCH) containing unknown or "
        "duplicate fields. Valid values are: - Ignore: This will ignore any "
        "unknown fields that are silently dropped from the object, and will ignore "
        "all but the last duplicate field that the decoder encounters. - Warn: "
        "This will send a warning via the standard warning response header for "
        "each unknown field that is dropped from the object, and for each "
        "duplicate field that is encountered. - Strict: This will fail the request "
        "with a BadRequest error if any unknown fields would be dropped from the "
        "object, or if any duplicate fields are present. The error returned from "
        "the server will contain all unknown and duplicate fields encountered.",
    ),
    "force": _q(
        "force",
        "boolean",
        'Force is going to "force" Apply requests. It means user will '
        "re-acquire conflicting fields owned by other people. Force flag must be unset for "
        "non-apply patch requests.",
    ),
    "gracePeriodSeconds": _q(
        "gracePeriodSeconds",
        "integer",
        "The duration in seconds before the "
        "object should be deleted. Value must be non-negative integer. The "
        "value zero indicates delete immediately. If this value is nil, the "
        "default grace period for the specified type will be used.",
    ),
    "ignoreStore": _q(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
        "if set to true, "
        "it will trigger an unsafe deletion of the resource in case the normal "
        "deletion flow fails with a corrupt object error.",
    ),
    "orphanDependents": _q(
        "orphanDependents",
        "boolean",
        "Deprecated: please use the "
        "PropagationPolicy, this field will be deprecated in 1.7. Should the "
        "dependent objects be orphaned.",
    ),
    "propagationPolicy": _q(
        "propagationPolicy",
        "string",
        "Whether and how garbage collection will "
        "be performed. Acceptable values are: 'Orphan', 'Background', "
        "'Foreground'.",
    ),
    "allowWatchBookmarks": _q(
        "allowWatchBookmarks",
        "boolean",
        "allowWatchBookmarks requests watch "
        'events with type "BOOKMARK". If this is not a watch, this field is '
        "ignored.",
    ),
    "continue": _q(
        "continue", "string", "The continue option should be set when retrieving more results from the server."
    ),
    "fieldSelector": _q(
        "fieldSelector",
        "string",
        "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
    ),
    "labelSelector": _q(
        "labelSelector",
        "string",
        "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
    ),
    "limit": _q(
        "limit",
        "integer",
        "limit is a maximum number of responses to return for a list "
        "call. If more items exist, the server will set the `continue` field on the list "
        "metadata.",
    ),
    "resourceVersion": _q(
        "resourceVersion",
        "string",
        "resourceVersion sets a constraint on what "
        "resource versions a request may be served from. See "
        "https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions "
        "for details.\n\nDefaults to unset",
    ),
    "resourceVersionMatch": _q(
        "resourceVersionMatch",
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls.\n\nDefaults to unset",
    ),
    "sendInitialEvents": _q(
        "sendInitialEvents",
        "boolean",
        "`sendInitialEvents=true` may be set "
        "together with `watch=true`. In that case, the watch stream will begin "
        "with synthetic events to produce the current state of objects in the "
        "collection, followed by a BOOKMARK event.",
    ),
    "timeoutSeconds": _q(
        "timeoutSeconds",
        "integer",
        "Timeout for the list/watch call. This limits "
        "the duration of the call, regardless of any activity or inactivity.",
    ),
    "watch": _q(
        "watch",
        "boolean",
        "Watch for changes to the described resources and return them "
        "as a stream of add, update, and remove notifications. Specify resourceVersion.",
    ),
}

LIST_PARAMS = [
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
]
DELETECOLLECTION_PARAMS = [
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStore",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
]
DELETE_PARAMS = ["dryRun", "gracePeriodSeconds", "ignoreStore", "orphanDependents", "propagationPolicy"]
WRITE_PARAMS = ["dryRun", "fieldManager", "fieldValidation"]
PATCH_PARAMS = ["dryRun", "fieldManagerPatch", "fieldValidation", "force"]


def _params(names: list[str]) -> list[dict]:
    return [P[n] for n in names]


# -- naming -------------------------------------------------------------------------------


def gv_key(group: str, version: str) -> str:
    """Index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"api/{version}" if group == "" else f"apis/{group}/{version}"


def gv_filename(group: str, version: str) -> str:
    return gv_key(group, version).replace("/", "__") + ".json"


def _group_camel(group: str) -> str:
    if group == "":
        return "Core"
    first = group.split(".")[0]
    return first[:1].upper() + first[1:]


def _tag(group: str, version: str) -> str:
    return ("core" if group == "" else group.split(".")[0]) + "_" + version


def _gvk(group: str, version: str, kind: str) -> dict:
    return {"group": group, "kind": kind, "version": version}


def _content(types: list[str], schema_name: str) -> dict:
    return {t: {"schema": {"$ref": _COMPONENTS_REF + schema_name}} for t in types}


def _response(code_desc: list[tuple[str, str]], schema_name: str, types: list[str] | None = None) -> dict:
    return {
        code: {"content": _content(types or _RESPONSE_TYPES, schema_name), "description": desc}
        for code, desc in code_desc
    }


# -- definitions ----------------------------------------------------------------------------


def definition_name_for(defs: dict, group: str, version: str, kind: str) -> str:
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            if g.get("group", "") == group and g["version"] == version and g["kind"] == kind:
                return name
    raise KeyError(f"no upstream schema for {group or 'core'}/{version} {kind}")


def _refs(node: Any, out: set[str], prefix: str) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            out.add(ref[len(prefix) :])
        for v in node.values():
            _refs(v, out, prefix)
    elif isinstance(node, list):
        for v in node:
            _refs(v, out, prefix)


def closure(defs: dict, roots: set[str]) -> list[str]:
    """Every definition reachable from ``roots`` through ``$ref``, sorted."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(defs[name], found, _DEFS_REF)
        todo.extend(found - seen)
    return sorted(seen)


def to_v3_schema(node: Any, top: bool = True, in_properties_of_kind: bool = False) -> Any:
    """Convert a JSON-Schema 2020-12 fragment into an OpenAPI 3.0 schema like upstream's.

    ``type: [x, "null"]`` becomes ``type: x``; ``$ref`` points into ``components/schemas`` and
    is wrapped in ``allOf`` when it has siblings (kube-openapi's WrapRefs); the single-valued
    ``enum`` that kubernetes-validate adds to ``apiVersion``/``kind`` is dropped.
    """
    if isinstance(node, list):
        return [to_v3_schema(v, False) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, val in node.items():
        if key == "$ref":
            out[key] = _COMPONENTS_REF + val[len(_DEFS_REF) :]
        elif key == "type" and isinstance(val, list):
            types = [t for t in val if t != "null"]
            out[key] = types[0] if len(types) == 1 else types
        elif key == "properties" and isinstance(val, dict):
            props = {}
            for pname, pval in val.items():
                conv = to_v3_schema(pval, False)
                if pname in ("apiVersion", "kind") and in_properties_of_kind and isinstance(conv, dict):
                    conv.pop("enum", None)
                props[pname] = conv
            out[key] = props
        elif key in ("items", "additionalProperties", "not"):
            out[key] = to_v3_schema(val, False)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_v3_schema(v, False) for v in val]
        else:
            out[key] = copy.deepcopy(val)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def v3_component(name: str, raw: dict) -> dict:
    if name in _SPECIAL_V3:
        return dict(_SPECIAL_V3[name])
    is_kind = "x-kubernetes-group-version-kind" in raw
    return to_v3_schema(raw, True, is_kind)


# -- paths ------------------------------------------------------------------------------------


def _op(
    description: str,
    op_id: str,
    tag: str,
    action: str,
    gvk: dict,
    responses: dict,
    params: list[dict] | None = None,
    body: dict | None = None,
) -> dict:
    op: dict[str, Any] = {"description": description, "operationId": op_id}
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = body
    op["responses"] = responses
    op["tags"] = [tag]
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = gvk
    return op


def _body(schema_name: str, types: list[str] | None = None, required: bool = True) -> dict:
    body: dict[str, Any] = {
        "content": {t: {"schema": {"$ref": _COMPONENTS_REF + schema_name}} for t in (types or ["*/*"])}
    }
    if required:
        body["required"] = True
    return body


def resource_paths(res: dict, defs: dict) -> tuple[dict, set[str]]:
    """The ``paths`` entries of one served resource and the schemas they reference."""
    g, v, kind, plural = res["group"], res["version"], res["kind"], res["plural"]
    namespaced = res["namespaced"]
    verbs = set(res["verbs"])
    name = definition_name_for(defs, g, v, kind)
    listable = bool({"list", "watch"} & verbs)  # create-only kinds (reviews) have no List
    list_name = definition_name_for(defs, g, v, kind + "List") if listable else name
    gvk = _gvk(g, v, kind)
    tag = _tag(g, v)
    prefix = "/api/" + v if g == "" else f"/apis/{g}/{v}"
    ident = _group_camel(g) + v[:1].upper() + v[1:]
    ns_word = "Namespaced" if namespaced else ""
    collection = f"{prefix}/namespaces/{{namespace}}/{plural}" if namespaced else f"{prefix}/{plural}"
    item = collection + "/{name}"
    scope_params = [P["namespace"]] if namespaced else []
    used = {name, list_name}
    paths: dict[str, dict] = {}

    coll: dict[str, Any] = {}
    if "list" in verbs or "watch" in verbs:
        coll["get"] = _op(
            f"list or watch objects of kind {kind}",
            f"list{ident}{ns_word}{kind}",
            tag,
            "list",
            gvk,
            _response([("200", "OK")], list_name, _WATCH_TYPES),
            _params(LIST_PARAMS),
        )
    if "create" in verbs:
        coll["post"] = _op(
            f"create a {kind}",
            f"create{ident}{ns_word}{kind}",
            tag,
            "post",
            gvk,
            _response([("200", "OK"), ("201", "Created"), ("202", "Accepted")], name),
            _params(WRITE_PARAMS),
            _body(name),
        )
    if "deletecollection" in verbs:
        coll["delete"] = _op(
            f"delete collection of {kind}",
            f"delete{ident}Collection{ns_word}{kind}",
            tag,
            "deletecollection",
            gvk,
            _response([("200", "OK")], STATUS),
            _params(DELETECOLLECTION_PARAMS),
            _body(DELETE_OPTIONS, required=False),
        )
        used |= {STATUS, DELETE_OPTIONS}
    coll["parameters"] = scope_params + [P["pretty"]]
    paths[collection] = coll

    if namespaced and ("list" in verbs or "watch" in verbs):
        paths[f"{prefix}/{plural}"] = {
            "get": _op(
                f"list or watch objects of kind {kind}",
                f"list{ident}{kind}ForAllNamespaces",
                tag,
                "list",
                gvk,
                _response([("200", "OK")], list_name, _WATCH_TYPES),
                _params(LIST_PARAMS),
            ),
            "parameters": [P["pretty"]],
        }

    it: dict[str, Any] = {}
    if "get" in verbs:
        it["get"] = _op(
            f"read the specified {kind}",
            f"read{ident}{ns_word}{kind}",
            tag,
            "get",
            gvk,
            _response([("200", "OK")], name),
        )
    if "update" in verbs:
        it["put"] = _op(
            f"replace the specified {kind}",
            f"replace{ident}{ns_word}{kind}",
            tag,
            "put",
            gvk,
            _response([("200", "OK"), ("201", "Created")], name),
            _params(WRITE_PARAMS),
            _body(name),
        )
    if "patch" in verbs:
        it["patch"] = _op(
            f"partially update the specified {kind}",
            f"patch{ident}{ns_word}{kind}",
            tag,
            "patch",
            gvk,
            _response([("200", "OK"), ("201", "Created")], name),
            _params(PATCH_PARAMS),
            _body(PATCH, PATCH_TYPES),
        )
        used.add(PATCH)
    if "delete" in verbs:
        it["delete"] = _op(
            f"delete a {kind}",
            f"delete{ident}{ns_word}{kind}",
            tag,
            "delete",
            gvk,
            _response([("200", "OK"), ("202", "Accepted")], name),
            _params(DELETE_PARAMS),
            _body(DELETE_OPTIONS, required=False),
        )
        used.add(DELETE_OPTIONS)
    it["parameters"] = [P["name"](kind)] + scope_params + [P["pretty"]]
    if set(it) - {"parameters"}:
        paths[item] = it

    for sub in res.get("subresources", []):
        sname = sub["name"]
        sg, sv, skind = sub.get("group", g), sub.get("version", v), sub.get("kind", kind)
        sschema = definition_name_for(defs, sg, sv, skind)
        used.add(sschema)
        sgvk = _gvk(sg, sv, skind)
        sverbs = set(sub["verbs"])
        cap = sname[:1].upper() + sname[1:]
        sp: dict[str, Any] = {}
        if "get" in sverbs:
            sp["get"] = _op(
                f"read {sname} of the specified {kind}",
                f"read{ident}{ns_word}{kind}{cap}",
                tag,
                "get",
                sgvk,
                _response([("200", "OK")], sschema),
            )
        if "update" in sverbs:
            sp["put"] = _op(
                f"replace {sname} of the specified {kind}",
                f"replace{ident}{ns_word}{kind}{cap}",
                tag,
                "put",
                sgvk,
                _response([("200", "OK"), ("201", "Created")], sschema),
                _params(WRITE_PARAMS),
                _body(sschema),
            )
        if "patch" in sverbs:
            sp["patch"] = _op(
                f"partially update {sname} of the specified {kind}",
                f"patch{ident}{ns_word}{kind}{cap}",
                tag,
                "patch",
                sgvk,
                _response([("200", "OK"), ("201", "Created")], sschema),
                _params(PATCH_PARAMS),
                _body(PATCH, PATCH_TYPES),
            )
            used.add(PATCH)
        if "create" in sverbs:
            sp["post"] = _op(
                f"create {sname} of a {kind}",
                f"create{ident}{ns_word}{kind}{cap}",
                tag,
                "post",
                sgvk,
                _response([("200", "OK"), ("201", "Created"), ("202", "Accepted")], sschema),
                _params(WRITE_PARAMS),
                _body(sschema),
            )
        sp["parameters"] = [P["name"](sschema.rsplit(".", 1)[-1])] + scope_params + [P["pretty"]]
        paths[f"{item}/{sname}"] = sp
    return paths, used


def discovery_path(group: str, version: str) -> dict:
    prefix = "/api/" + version if group == "" else f"/apis/{group}/{version}"
    ident = _group_camel(group) + version[:1].upper() + version[1:]
    return {
        f"{prefix}/": {
            "get": {
                "description": "get available resources",
                "operationId": f"get{ident}APIResources",
                "responses": _response(
                    [("200", "OK")],
                    API_RESOURCE_LIST,
                    ["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"],
                ),
                "tags": [_tag(group, version)],
            }
        }
    }


# -- assembly -----------------------------------------------------------------------------------


def load_served(path: Path = SERVED) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)["resources"]


def build(defs: dict, served: list[dict]) -> tuple[dict, dict[str, dict]]:
    """Return (restricted definitions, {filename: v3 document})."""
    by_gv: dict[tuple[str, str], list[dict]] = {}
    for res in served:
        by_gv.setdefault((res["group"], res["version"]), []).append(res)

    docs: dict[str, dict] = {}
    all_roots: set[str] = set(EXTRA_ROOTS)
    for (g, v), resources in sorted(by_gv.items()):
        paths: dict[str, dict] = dict(discovery_path(g, v))
        roots: set[str] = {API_RESOURCE_LIST}
        for res in resources:
            rp, used = resource_paths(res, defs)
            paths.update(rp)
            roots |= used
        names = closure(defs, roots)
        all_roots |= roots
        docs[gv_filename(g, v)] = {
            "components": {"schemas": {n: v3_component(n, defs[n]) for n in names}},
            "info": {"title": "Kubernetes", "version": K8S_VERSION},
            "openapi": "3.0.0",
            "paths": dict(sorted(paths.items())),
        }
    restricted = {n: defs[n] for n in closure(defs, all_roots)}
    return {"$defs": restricted}, docs


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    src = source_definitions_path()
    with open(src, encoding="utf-8") as f:
        defs = json.load(f)["$defs"]
    definitions, docs = build(defs, load_served())
    OUT_DIR.mkdir(exist_ok=True)
    v3 = OUT_DIR / "v3"
    v3.mkdir(exist_ok=True)
    (OUT_DIR / "definitions.json").write_text(_dump(definitions), encoding="utf-8")
    for stale in v3.glob("*.json"):
        if stale.name not in docs:
            stale.unlink()
    for fname, doc in docs.items():
        (v3 / fname).write_text(_dump(doc), encoding="utf-8")
    print(f"definitions.json: {len(definitions['$defs'])} schemas; v3: {', '.join(sorted(docs))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
