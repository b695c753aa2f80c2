"""resource.k8s.io/v1alpha3 ResourcePoolStatusRequest (KEP-5677, DRAResourcePoolStatus, alpha
and off by default in v1.36): a cluster-scoped request whose status the
resourcepoolstatusrequest controller (mockkube.controllers.resourcepoolstatus) fills once.

Validation is v1.36's: the declarative rules of the v1alpha3 types (driver and pool-name
formats, limit 1..1000 defaulting to 100, an immutable spec, the status's bounds) and the
hand-written ones (object metadata; a status, once set, is immutable; conditions).
"""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.resources import dra_validation_common as c
from mockkube.apiserver.resources.strategies import SpecStatusStrategy
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.fielderrors import FieldError, Path
from mockkube.machinery.registry import REGISTRY, ResourceType, Subresource

GATE = "DRAResourcePoolStatus"
LIMIT_DEFAULT = 100
LIMIT_MAX = 1000
MAX_POOLS = 1000
MAX_CONDITIONS = 10
VALIDATION_ERROR_MAX_BYTES = 256


def _long_name_caseless(value: Any, path: Path) -> list[FieldError]:
    """+k8s:format=k8s-long-name-caseless: a DNS subdomain, upper case allowed."""
    if not isinstance(value, str) or not value:
        return [fe.required(str(path))]
    return [fe.invalid(str(path), value, m) for m in names.dns1123_subdomain(value.lower())]


def _minimum(value: Any, least: int, path: Path) -> list[FieldError]:
    if isinstance(value, int) and value < least:
        return [fe.invalid(str(path), value, f"must be greater than or equal to {least}")]
    return []


def default_request(obj: dict, now: str | None = None) -> None:
    """+default=100 on spec.limit."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("limit") is None:
        spec["limit"] = LIMIT_DEFAULT


def validate_spec(spec: dict, path: Path) -> list[FieldError]:
    errs = _long_name_caseless(spec.get("driver"), path.child("driver"))
    pool = spec.get("poolName")
    if pool is not None:
        errs += c.validate_pool_name(pool, path.child("poolName"))
    limit = spec.get("limit")
    errs += _minimum(limit, 1, path.child("limit"))
    if isinstance(limit, int) and limit > LIMIT_MAX:
        errs.append(fe.invalid(str(path.child("limit")), limit, f"must be less than or equal to {LIMIT_MAX}"))
    return errs


def _validate_pool(pool: dict, path: Path) -> list[FieldError]:
    errs = _long_name_caseless(pool.get("driver"), path.child("driver"))
    if not pool.get("poolName"):
        errs.append(fe.required(str(path.child("poolName"))))
    else:
        errs += c.validate_pool_name(pool["poolName"], path.child("poolName"))
    errs += _minimum(pool.get("generation"), 0, path.child("generation"))
    errs += _minimum(pool.get("resourceSliceCount"), 1, path.child("resourceSliceCount"))
    for k in ("totalDevices", "allocatedDevices", "availableDevices", "unavailableDevices"):
        errs += _minimum(pool.get(k), 0, path.child(k))
    node = pool.get("nodeName")
    if node is not None:
        errs += [fe.invalid(str(path.child("nodeName")), node, m) for m in names.dns1123_subdomain(node)]
    verr = pool.get("validationError")
    if isinstance(verr, str) and len(verr.encode()) > VALIDATION_ERROR_MAX_BYTES:
        errs.append(fe.too_long(str(path.child("validationError")), verr, VALIDATION_ERROR_MAX_BYTES))
    return errs


def validate_status(status: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if status.get("poolCount") is None:
        errs.append(fe.required(str(path.child("poolCount"))))
    errs += _minimum(status.get("poolCount"), 0, path.child("poolCount"))
    pools = status.get("pools") or []
    if len(pools) > MAX_POOLS:
        errs.append(fe.too_many(str(path.child("pools")), len(pools), MAX_POOLS))
    for i, p in enumerate(pools):
        errs += _validate_pool(p if isinstance(p, dict) else {}, path.child("pools").index(i))
    conds = status.get("conditions") or []
    if len(conds) > MAX_CONDITIONS:
        errs.append(fe.too_many(str(path.child("conditions")), len(conds), MAX_CONDITIONS))
    errs += c.validate_conditions(conds, path.child("conditions"))
    return errs


def validate_request(obj: dict) -> list[FieldError]:
    return validate_spec(obj.get("spec") or {}, Path("spec"))


def validate_request_update(new: dict, old: dict) -> list[FieldError]:
    """(object metadata is the generic registry's to check, on every write)"""
    return names.validate_immutable(new.get("spec") or {}, old.get("spec") or {}, "spec")


def validate_request_status_update(new: dict, old: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    status, old_status = new.get("status"), old.get("status")
    if old_status is not None:  # the request is complete: its status never changes again
        return errs + names.validate_immutable(status, old_status, "status")
    if status is None:
        return errs
    return errs + validate_status(status, Path("status"))


class ResourcePoolStatusRequestStrategy(SpecStatusStrategy):
    tracks_generation = False

    def default(self, obj: dict, now: str | None = None) -> None:
        default_request(obj, now)

    def validate(self, obj: dict) -> list[FieldError]:
        return validate_request(obj)

    def validate_update(self, new: dict, old: dict) -> list[FieldError]:
        return validate_request_update(new, old)

    def validate_status_update(self, new: dict, old: dict) -> list[FieldError]:
        return validate_request_status_update(new, old)


resourcepoolstatusrequests = REGISTRY.add(
    ResourceType(
        "resource.k8s.io",
        "v1alpha3",
        "ResourcePoolStatusRequest",
        "resourcepoolstatusrequests",
        namespaced=False,
        subresources=(Subresource("status", "ResourcePoolStatusRequest"),),
        strategy=ResourcePoolStatusRequestStrategy(),
        feature_gate=GATE,
    )
)
