"""Custom resources: what a CustomResourceDefinition makes the server serve.

``served_types(crd)`` turns an established CRD into one ``ResourceType`` per served
version (all sharing one storage key, as upstream stores every version under one etcd
prefix), each with a ``CustomResourceStrategy``: the version's structural schema prunes
unknown fields (reported for fieldValidation Strict/Warn), applies defaults and validates
(``mockkube.machinery.structural``), ``x-kubernetes-validations`` rules run through
``mockkube.machinery.crdcel``, and the status and scale subresources behave as
``apiextensions-apiserver/pkg/registry/customresource`` does. Tables come from
``additionalPrinterColumns``. Pure: the server wires these into its registry
(``mockkube/resources/apiextensions.py``).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from mockkube.machinery import crdcel, structural
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.jsonpath import JSONPathError, find, parse
from mockkube.machinery.meta import clone
from mockkube.machinery.registry import ResourceType, Subresource
from mockkube.machinery.schema import Node
from mockkube.resources.strategies import SpecStatusStrategy

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_NAME_DESC = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
              "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
              "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
              "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
_CREATED_DESC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is "
                 "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
                 "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
                 "Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                 "api-conventions.md#metadata")


# -- versions ----------------------------------------------------------------------------------

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple:
    """Sort key of kube-aware version order: v2 < v1 < v1beta2 < v1beta1 < v1alpha1 < foo."""
    m = _KUBE_VERSION.match(version)
    if not m:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    return ({None: 0, "beta": 1, "alpha": 2}[stage], -major, -minor, "")


def storage_version(crd: dict) -> str:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("storage"):
            return v.get("name", "")
    return ""


def is_established(crd: dict) -> bool:
    for c in (crd.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Established":
            return c.get("status") == "True"
    return False


# -- schemas -----------------------------------------------------------------------------------

def version_schema(crd: dict, version: dict) -> dict:
    """The openAPIV3Schema of one version (a CRD without one preserves everything)."""
    sch = (version.get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(sch, dict):
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return sch


def _node_raw(raw: dict) -> dict:
    """A structural schema as the ``Node`` tree that apply and strategic merge walk: fields
    that keep unknown content become free maps, nested values keep their list types."""
    out = dict(raw)
    if "properties" in raw:
        out["properties"] = {k: _node_raw(v) for k, v in raw["properties"].items() if isinstance(v, dict)}
    if isinstance(raw.get("additionalProperties"), dict):
        out["additionalProperties"] = _node_raw(raw["additionalProperties"])
    if isinstance(raw.get("items"), dict):
        out["items"] = _node_raw(raw["items"])
    if raw.get("x-kubernetes-preserve-unknown-fields") and "properties" not in raw \
            and "additionalProperties" not in raw:
        out["additionalProperties"] = {}
    if raw.get("x-kubernetes-embedded-resource"):
        props = dict(out.get("properties") or {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props["metadata"] = {"$ref": "#/$defs/" + OBJECT_META}
        out["properties"] = props
    if raw.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
    return out


def schema_node(schema: dict) -> Node:
    """The root ``Node`` of a custom resource (metadata is upstream's ObjectMeta)."""
    raw = _node_raw(schema)
    props = dict(raw.get("properties") or {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"$ref": "#/$defs/" + OBJECT_META}
    raw["properties"] = props
    raw["type"] = "object"
    raw.pop("additionalProperties", None) if "properties" in raw and raw.get("additionalProperties") == {} else None
    return Node(raw)


def _value_at(obj: dict, path: str) -> Any:
    cur: Any = obj
    for part in [p for p in path.split(".") if p]:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def set_path(obj: dict, path: str, value: Any) -> None:
    """Set a dotted ``.a.b`` path, making the objects on the way."""
    parts = [p for p in path.split(".") if p]
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


# -- strategy ----------------------------------------------------------------------------------

class CustomResourceStrategy(SpecStatusStrategy):
    """One served version of a custom resource."""

    tracks_generation = True
    terminating = False  # set when the CRD is being deleted: no new objects

    def __init__(self, crd: dict, version: dict) -> None:
        self.schema = version_schema(crd, version)
        subs = version.get("subresources") or {}
        self.has_status = "status" in subs
        self.scale = subs.get("scale")
        self.reset_status_on_create = self.has_status
        self.selectable = [f.get("jsonPath", "") for f in version.get("selectableFields") or []]
        spec = crd.get("spec") or {}
        self.storage_api_version = f"{spec.get('group', '')}/{storage_version(crd) or version.get('name', '')}"

    # unknown fields: Strict / Warn / Ignore (called by the generic registry's decode step)
    def structure(self, obj: dict) -> list[str]:
        return structural.prune_unknown(obj, self.schema)

    def default(self, obj: dict, now: str | None = None) -> None:
        structural.default_object(obj, self.schema)

    def admit(self, obj: dict, old: dict | None, res: Any) -> None:
        if old is None and self.terminating:
            from mockkube.machinery import errors

            raise errors.method_not_allowed("create not allowed while custom resource definition is terminating")

    # objects are stored at the storage version whichever version wrote them (conversion None)
    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        obj["apiVersion"] = self.storage_api_version

    def prepare_update(self, new: dict, old: dict) -> None:
        if self.has_status:
            super().prepare_update(new, old)
        new["apiVersion"] = self.storage_api_version

    def prepare_status_update(self, new: dict, old: dict) -> None:
        super().prepare_status_update(new, old)

    def _errors(self, obj: dict, old: dict | None) -> list[fe.FieldError]:
        errs = structural.validate(obj, self.schema) + structural.list_errors(obj, self.schema)
        errs += crdcel.validate(obj, old, self.schema)
        if self.scale:
            path = self.scale.get("specReplicasPath", "")
            v = _value_at(obj, path)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > 2**31 - 1):
                if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                    errs.append(fe.invalid(path.lstrip("."), v, "should be a non-negative integer"))
        return errs

    def validate(self, obj: dict) -> list[fe.FieldError]:
        return self._errors(obj, None)

    def validate_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self._errors(new, old)

    def validate_status_update(self, new: dict, old: dict) -> list[fe.FieldError]:
        return self._errors(new, old)

    # scale subresource
    def scale_paths(self) -> dict | None:
        return self.scale


def _selectable(path: str):
    return lambda obj: _field_string(_value_at(obj, path))


def _field_string(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


# -- tables ------------------------------------------------------------------------------------

class PrinterColumns:
    """A Table printer from ``additionalPrinterColumns`` (upstream's tableconvertor)."""

    def __init__(self, columns: list[dict]) -> None:
        if not columns:
            columns = [{"name": "Age", "type": "date", "description": _CREATED_DESC,
                        "jsonPath": ".metadata.creationTimestamp"}]
        self._defs = [{"name": "Name", "type": "string", "format": "name", "description": _NAME_DESC,
                       "priority": 0}]
        self._paths: list[tuple[str, Any]] = []
        for c in columns:
            try:
                steps = parse(c.get("jsonPath", ""))
            except JSONPathError:
                steps = []
            self._paths.append((c.get("type", "string"), steps))
            desc = c.get("description") or \
                f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}"
            self._defs.append({"name": c.get("name", ""), "type": c.get("type", "string"),
                               "format": c.get("format", ""), "description": desc,
                               "priority": int(c.get("priority") or 0)})

    def columns(self) -> list[dict]:
        return [dict(c) for c in self._defs]

    def cells(self, obj: dict, now: datetime) -> list:
        from mockkube.api.tables import since

        out: list = [(obj.get("metadata") or {}).get("name", "")]
        for typ, steps in self._paths:
            found = find(obj, steps) if steps else []
            if not found or found[0] is None:
                out.append(None)
                continue
            v = found[0]
            if typ == "date" and isinstance(v, str):
                out.append(since(v, now))
            elif isinstance(v, (dict, list)):
                out.append(json.dumps(v, separators=(",", ":")))
            else:
                out.append(v)
        return out


# -- the served types --------------------------------------------------------------------------

def served_types(crd: dict) -> list[ResourceType]:
    """One ResourceType per served version of an established CRD."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    plural = names.get("plural", "")
    kind = names.get("kind", "")
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served"):
            continue
        strategy = CustomResourceStrategy(crd, v)
        subs: list[Subresource] = []
        if strategy.has_status:
            subs.append(Subresource("status", kind))
        if strategy.scale:
            subs.append(Subresource("scale", "Scale", "autoscaling", "v1"))
        fields = {p.lstrip("."): _selectable(p) for p in strategy.selectable if p}
        out.append(ResourceType(
            group, v.get("name", ""), kind, plural, namespaced=spec.get("scope") == "Namespaced",
            singular=names.get("singular") or kind.lower(), short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()), subresources=tuple(subs), strategy=strategy,
            selectable_fields=fields, storage_key=f"{group}/{plural}",
            schema=schema_node(strategy.schema), table=PrinterColumns(v.get("additionalPrinterColumns") or []),
            version_priority=0))
    out.sort(key=lambda rt: version_priority(rt.version))
    for i, rt in enumerate(out):
        rt.version_priority = i
    return out


def convert(obj: dict, api_version: str) -> dict:
    """Conversion ``None``: only apiVersion changes."""
    if obj.get("apiVersion") == api_version:
        return obj
    out = clone(obj)
    out["apiVersion"] = api_version
    return out


def raw_as(entry: Any, api_version: str) -> bytes:
    """The stored bytes of ``entry`` as ``api_version`` (conversion None rewrites apiVersion)."""
    if entry.obj.get("apiVersion") == api_version and entry.raw:
        return entry.raw
    return json.dumps(convert(entry.obj, api_version), separators=(",", ":"), ensure_ascii=False).encode()


def scale_view(obj: dict, paths: dict) -> dict:
    """autoscaling/v1 Scale of a custom resource from its scale subresource's paths."""
    m = obj.get("metadata") or {}
    replicas = _value_at(obj, paths.get("specReplicasPath", ""))
    status_replicas = _value_at(obj, paths.get("statusReplicasPath", ""))
    selector = _value_at(obj, paths["labelSelectorPath"]) if paths.get("labelSelectorPath") else None
    status: dict = {"replicas": status_replicas if isinstance(status_replicas, int) else 0}
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": m.get("name"), "namespace": m.get("namespace", ""), "uid": m.get("uid"),
                         "resourceVersion": m.get("resourceVersion"),
                         "creationTimestamp": m.get("creationTimestamp")},
            "spec": {"replicas": replicas if isinstance(replicas, int) else 0}, "status": status}
