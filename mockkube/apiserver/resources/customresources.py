"""Custom resources served from a CustomResourceDefinition: their strategy and types.

``served_types(crd)`` turns an established CRD into one ``ResourceType`` per served
version (all sharing one storage key, as upstream stores every version under one etcd
prefix), each with a ``CustomResourceStrategy``: the version's structural schema prunes
unknown fields (reported for fieldValidation Strict/Warn), applies defaults and validates
(``mockkube.machinery.structural``), ``x-kubernetes-validations`` rules run through
``mockkube.apiserver.crdcel``, and the status and scale subresources behave as
``apiextensions-apiserver/pkg/registry/customresource`` does. The Table columns are the
version's ``additionalPrinterColumns`` (rendered by ``mockkube/apiserver/http/tables_custom.py``).
"""

from __future__ import annotations

import functools
from typing import Any

from mockkube.apiserver import crdcel
from mockkube.apiserver.conversion import converter_for
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import structural, validation
from mockkube.machinery.customresource import (
    OBJECT_META,
    convert,
    schema_node,
    storage_version,
    value_at,
    version_priority,
    version_schema,
)
from mockkube.machinery.registry import ResourceType, Subresource
from mockkube.machinery.schema import Node


@functools.lru_cache(maxsize=1)
def _meta_root() -> Node:
    return Node({"type": "object", "properties": {"metadata": {"$ref": "#/$defs/" + OBJECT_META}}})


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
        self.kind = (spec.get("names") or {}).get("kind", "")
        self.version = version.get("name", "")
        self.storage_api_version = f"{spec.get('group', '')}/{storage_version(crd) or version.get('name', '')}"
        self.converter = converter_for(crd)  # None: conversion None

    # unknown fields: Strict / Warn / Ignore (called by the generic registry's decode step)
    def structure(self, obj: dict) -> list[str]:
        """Prune what the schema does not specify and list it; metadata is decoded as
        upstream's ObjectMeta (a type error there is the 400 of a failed decode)."""
        unknown: list[str] = []
        if isinstance(obj.get("metadata"), dict):
            found = validation.check_structure({"metadata": obj["metadata"]}, _meta_root(), prune=True)
            if found.type_errors:
                raise validation.decode_error(self.kind, self.version, found.type_errors)
            unknown += found.unknown_fields
        return unknown + structural.prune_unknown(obj, self.schema)

    def default(self, obj: dict, now: str | None = None) -> None:
        structural.default_object(obj, self.schema)

    def generation_changed(self, new: dict, old: dict) -> bool:
        """Anything but metadata counts, status too unless it is a subresource (upstream)."""
        skip = {"metadata", "apiVersion", "kind"} | ({"status"} if self.has_status else set())
        return any(new.get(k) != old.get(k) for k in (set(new) | set(old)) - skip)

    def admit(self, obj: dict, old: dict | None, res: Any) -> None:
        if old is None and self.terminating:
            from mockkube.machinery import errors

            raise errors.method_not_allowed("create not allowed while custom resource definition is terminating")

    # objects are stored at the storage version whichever version wrote them
    def _to_storage(self, obj: dict) -> None:
        if obj.get("apiVersion") == self.storage_api_version:
            return
        if self.converter is None:
            obj["apiVersion"] = self.storage_api_version
            return
        converted = convert(obj, self.storage_api_version, self.converter)
        meta = obj.get("metadata")  # the generic registry holds on to this dict: keep it
        obj.clear()
        obj.update(converted)
        if isinstance(meta, dict):
            new_meta = converted.get("metadata") or {}
            meta.clear()
            meta.update(new_meta)
            obj["metadata"] = meta

    def prepare_create(self, obj: dict) -> None:
        super().prepare_create(obj)
        self._to_storage(obj)

    def prepare_update(self, new: dict, old: dict) -> None:
        self._to_storage(new)
        if self.has_status:
            super().prepare_update(new, old)

    def prepare_status_update(self, new: dict, old: dict) -> None:
        self._to_storage(new)
        super().prepare_status_update(new, old)

    def _errors(self, obj: dict, old: dict | None) -> list[fe.FieldError]:
        errs = (
            structural.validate(obj, self.schema)
            + structural.list_errors(obj, self.schema)
            + structural.embedded_errors(obj, self.schema)
        )
        errs += crdcel.validate(obj, old, self.schema)
        if self.scale:
            path = self.scale.get("specReplicasPath", "")
            v = value_at(obj, path)
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
    return lambda obj: _field_string(value_at(obj, path))


def _field_string(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


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
        out.append(
            ResourceType(
                group,
                v.get("name", ""),
                kind,
                plural,
                namespaced=spec.get("scope") == "Namespaced",
                singular=names.get("singular") or kind.lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=tuple(subs),
                strategy=strategy,
                selectable_fields=fields,
                storage_key=f"{group}/{plural}",
                schema=schema_node(strategy.schema),
                table=list(v.get("additionalPrinterColumns") or []),
                version_priority=0,
            )
        )
    out.sort(key=lambda rt: version_priority(rt.version))
    for i, rt in enumerate(out):
        rt.version_priority = i
    return out
