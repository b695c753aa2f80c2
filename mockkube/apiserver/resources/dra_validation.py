"""Semantic validation of the resource.k8s.io kinds, as kube-apiserver v1.36 performs it.

Every function returns ``FieldError``s with upstream field paths; the caller wraps them with
``errors.invalid(kind, group, name, errs)``. Claims, templates and slices live in their own
modules (re-exported here); DeviceClass and DeviceTaintRule are small enough to live here.
"""

from __future__ import annotations

from mockkube.apiserver.resources import dra_validation_common as c
from mockkube.apiserver.resources.dra_validation_claim import (
    validate_resource_claim,
    validate_resource_claim_status_update,
    validate_resource_claim_template,
    validate_resource_claim_template_update,
    validate_resource_claim_update,
)
from mockkube.apiserver.resources.dra_validation_slice import validate_resource_slice, validate_resource_slice_update
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.fielderrors import FieldError, Path


def validate_device_class(obj: dict) -> list[FieldError]:
    errs = names.validate_object_meta(obj.get("metadata"), False, "metadata", names.name_is_long_name)
    return errs + _validate_class_spec(obj.get("spec") or {}, None, Path("spec"))


def validate_device_class_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta(new.get("metadata"), False, "metadata", names.name_is_long_name)
    errs += names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    return errs + _validate_class_spec(new.get("spec") or {}, old.get("spec") or {}, Path("spec"))


def _validate_class_spec(spec: dict, old: dict | None, path: Path) -> list[FieldError]:
    # Unchanged selectors/config count as "stored": they were valid when written.
    stored = old is not None and (spec.get("selectors") or []) == (old.get("selectors") or [])
    errs = c.validate_selectors(spec.get("selectors"), path.child("selectors"), stored)
    stored = old is not None and (spec.get("config") or []) == (old.get("config") or [])
    errs += c.validate_slice(
        spec.get("config"),
        c.DEVICE_CONFIG_MAX,
        lambda x, p: c.validate_device_configuration(x, p, stored),
        path.child("config"),
    )
    ern = spec.get("extendedResourceName")
    if ern is not None and not names.is_extended_resource_name(ern):
        errs.append(fe.invalid(str(path.child("extendedResourceName")), ern, "must be a valid extended resource name"))
    return errs


def validate_device_taint_rule(obj: dict) -> list[FieldError]:
    errs = names.validate_object_meta(obj.get("metadata"), False, "metadata", names.name_is_dns_subdomain)
    return errs + _validate_taint_rule_spec(obj.get("spec") or {}, None, Path("spec"))


def validate_device_taint_rule_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    return errs + _validate_taint_rule_spec(new.get("spec") or {}, old.get("spec") or {}, Path("spec"))


def validate_device_taint_rule_status_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    conds = (new.get("status") or {}).get("conditions") or []
    errs += c.validate_conditions(conds, Path("status").child("conditions"))
    if len(conds) > c.DEVICE_TAINT_RULE_MAX_CONDITIONS:
        errs.append(fe.too_many("status.conditions", len(conds), c.DEVICE_TAINT_RULE_MAX_CONDITIONS))
    return errs


def _validate_taint_rule_spec(spec: dict, old: dict | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    sel = spec.get("deviceSelector")
    if sel is not None:
        sp = path.child("deviceSelector")
        if sel.get("driver") is not None:
            errs += c.validate_driver_name(sel["driver"], sp.child("driver"))
        if sel.get("pool") is not None:
            errs += c.validate_pool_name(sel["pool"], sp.child("pool"))
        if sel.get("device") is not None:
            errs += c.validate_device_name(sel["device"], sp.child("device"))
    old_taint = (old or {}).get("taint") if old is not None else None
    errs += c.validate_device_taint(
        spec.get("taint") or {}, old_taint if old is not None else None, path.child("taint")
    )
    return errs
