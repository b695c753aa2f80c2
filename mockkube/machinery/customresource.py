"""Custom resources: the pure machinery behind what a CustomResourceDefinition serves.

Version order (kube-aware), the schema of a version as the ``Node`` tree that apply and
strategic merge walk (metadata is upstream's ObjectMeta), conversion ``None`` (only
``apiVersion`` changes, objects are stored at the storage version), and the scale
subresource's view through its declared paths. The strategy and the served types are
in ``mockkube/apiserver/resources/customresources.py``; printer columns in
``mockkube/apiserver/http/tables_custom.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mockkube.machinery.meta import clone
from mockkube.machinery.schema import Node

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


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
    if (
        raw.get("x-kubernetes-preserve-unknown-fields")
        and "properties" not in raw
        and "additionalProperties" not in raw
    ):
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


def value_at(obj: dict, path: str) -> Any:
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


def convert(obj: dict, api_version: str, converter: Any = None) -> dict:
    """``obj`` as ``api_version``: through the CRD's conversion webhook when it has one
    (``mockkube.apiserver.conversion``), else conversion ``None`` (only apiVersion changes)."""
    if obj.get("apiVersion") == api_version:
        return obj
    if converter is not None:
        return converter.convert([obj], api_version)[0]
    out = clone(obj)
    out["apiVersion"] = api_version
    return out


def convert_all(objs: list[dict], api_version: str, converter: Any = None) -> list[dict]:
    """A list's objects as ``api_version`` (one ConversionReview for all of them)."""
    if converter is not None:
        return converter.convert(objs, api_version)
    return [convert(o, api_version) for o in objs]


def dumps(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def raw_as(entry: Any, api_version: str, converter: Any = None) -> bytes:
    """The stored bytes of ``entry`` as ``api_version``."""
    if entry.obj.get("apiVersion") == api_version and entry.raw:
        return entry.raw
    return dumps(convert(entry.obj, api_version, converter))


def scale_view(obj: dict, paths: dict) -> dict:
    """autoscaling/v1 Scale of a custom resource from its scale subresource's paths."""
    m = obj.get("metadata") or {}
    replicas = value_at(obj, paths.get("specReplicasPath", ""))
    status_replicas = value_at(obj, paths.get("statusReplicasPath", ""))
    selector = value_at(obj, paths["labelSelectorPath"]) if paths.get("labelSelectorPath") else None
    status: dict = {"replicas": status_replicas if isinstance(status_replicas, int) else 0}
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m.get("name"),
            "namespace": m.get("namespace", ""),
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
            "creationTimestamp": m.get("creationTimestamp"),
        },
        "spec": {"replicas": replicas if isinstance(replicas, int) else 0},
        "status": status,
    }
