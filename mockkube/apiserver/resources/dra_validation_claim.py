"""ResourceClaim / ResourceClaimTemplate validation (upstream pkg/apis/resource/validation, v1 shape)."""

from __future__ import annotations

from typing import Any

from mockkube.apiserver.resources import dra_validation_common as c
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.fielderrors import FieldError, Path

_REQ_REF_MSG = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def validate_resource_claim(obj: dict) -> list[FieldError]:
    errs = names.validate_object_meta(obj.get("metadata"), True, "metadata", names.name_is_dns_subdomain)
    return errs + validate_claim_spec(obj.get("spec") or {}, Path("spec"))


def validate_resource_claim_update(new: dict, old: dict) -> list[FieldError]:
    """The spec is immutable; only that is checked (as upstream) besides metadata."""
    errs = names.validate_object_meta(new.get("metadata"), True, "metadata", names.name_is_dns_subdomain)
    errs += names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    errs += names.validate_immutable(new.get("spec") or {}, old.get("spec") or {}, "spec")
    return errs


def validate_resource_claim_status_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    req_names = _request_names((new.get("spec") or {}).get("devices") or {})
    deleted = bool((new.get("metadata") or {}).get("deletionTimestamp"))
    return errs + _validate_status(new.get("status") or {}, old.get("status") or {}, deleted, req_names, Path("status"))


def validate_resource_claim_template(obj: dict) -> list[FieldError]:
    errs = names.validate_object_meta(obj.get("metadata"), True, "metadata", names.name_is_dns_subdomain)
    spec = obj.get("spec") or {}
    errs += names.validate_template_object_meta(spec.get("metadata"), "spec.metadata")
    return errs + validate_claim_spec(spec.get("spec") or {}, Path("spec").child("spec"))


def validate_resource_claim_template_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    return errs + names.validate_immutable(new.get("spec") or {}, old.get("spec") or {}, "spec")


# --- spec ----------------------------------------------------------------------------------


def validate_claim_spec(spec: dict, path: Path, stored: bool = False) -> list[FieldError]:
    devices = spec.get("devices") or {}
    dp = path.child("devices")
    req_names = _request_names(devices)
    errs = c.validate_set(
        devices.get("requests"),
        c.DEVICE_REQUESTS_MAX,
        lambda r, p: _validate_request(r, p, stored),
        lambda r: r.get("name") or "",
        dp.child("requests"),
    )
    errs += c.validate_slice(
        devices.get("constraints"),
        c.DEVICE_CONSTRAINTS_MAX,
        lambda x, p: _validate_constraint(x, p, req_names),
        dp.child("constraints"),
    )
    errs += c.validate_slice(
        devices.get("config"),
        c.DEVICE_CONFIG_MAX,
        lambda x, p: _validate_claim_config(x, p, req_names, stored),
        dp.child("config"),
    )
    return errs


def _request_names(devices: dict) -> dict[str, set[str] | None]:
    out: dict[str, set[str] | None] = {}
    for r in devices.get("requests") or []:
        subs = r.get("firstAvailable") or []
        out[r.get("name") or ""] = {s.get("name") or "" for s in subs} if subs else None
    return out


def _has_request(req_names: dict, ref: str) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in req_names:
        return False
    if len(parts) == 1:
        return True
    subs = req_names[parts[0]]
    return subs is not None and parts[1] in subs


def _validate_request(req: dict, path: Path, stored: bool) -> list[FieldError]:
    errs = c.validate_request_name(req.get("name") or "", path.child("name"))
    first = req.get("firstAvailable") or []
    exactly = req.get("exactly")
    n = (1 if first else 0) + (1 if exactly is not None else 0)
    if n == 0:
        errs.append(fe.required(str(path), "exactly one of `exactly` or `firstAvailable` is required"))
    elif n > 1:
        errs.append(
            fe.invalid(
                str(path), None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
            )
        )
    elif first:
        errs += c.validate_set(
            first,
            c.FIRST_AVAILABLE_MAX,
            lambda s, p: _validate_subrequest(s, p, stored),
            lambda s: s.get("name") or "",
            path.child("firstAvailable"),
        )
    else:
        errs += _validate_exact(exactly, path.child("exactly"), stored)
    return errs


def _validate_common_request(r: dict, path: Path, stored: bool) -> list[FieldError]:
    errs = c.validate_device_class_ref(r.get("deviceClassName") or "", path.child("deviceClassName"))
    errs += c.validate_selectors(r.get("selectors"), path.child("selectors"), stored)
    errs += _validate_allocation_mode(
        r.get("allocationMode") or "", r.get("count") or 0, path.child("allocationMode"), path.child("count")
    )
    errs += c.validate_tolerations(r.get("tolerations"), path.child("tolerations"))
    errs += _validate_capacity_requests(r.get("capacity"), path.child("capacity"))
    return errs


def _validate_exact(r: dict, path: Path, stored: bool) -> list[FieldError]:
    return _validate_common_request(r or {}, path, stored)


def _validate_subrequest(r: dict, path: Path, stored: bool) -> list[FieldError]:
    return c.validate_request_name(r.get("name") or "", path.child("name")) + _validate_common_request(r, path, stored)


def _validate_allocation_mode(mode: str, count: int, mode_path: Path, count_path: Path) -> list[FieldError]:
    if mode == "All":
        if count != 0:
            return [fe.invalid(str(count_path), count, "must not be specified when allocationMode is 'All'")]
    elif mode == "ExactCount":
        if count <= 0:
            return [fe.invalid(str(count_path), count, "must be greater than zero")]
    else:
        return [fe.not_supported(str(mode_path), mode, ["All", "ExactCount"])]
    return []


def _validate_capacity_requests(cap: Any, path: Path) -> list[FieldError]:
    if not cap:
        return []
    rp = path.child("requests")
    errs: list[FieldError] = []
    for key, value in (cap.get("requests") or {}).items():
        errs += c.validate_qualified_name(key, rp)
        try:
            c.parse_quantity(value)
        except c.BadQuantity as exc:
            errs.append(fe.invalid(str(rp.key(key)), value, str(exc)))
    return errs


def _validate_request_ref(name: str, path: Path, req_names: dict) -> list[FieldError]:
    parts = name.split("/")
    if len(parts) > 2:
        return [fe.invalid(str(path), name, _REQ_REF_MSG)]
    errs: list[FieldError] = []
    for part in parts:
        errs += c.validate_request_name(part, path)
    if not _has_request(req_names, name):
        errs.append(fe.invalid(str(path), name, _REQ_REF_MSG))
    return errs


def _validate_request_refs(refs: Any, path: Path, req_names: dict) -> list[FieldError]:
    return c.validate_set(
        refs, c.DEVICE_REQUESTS_MAX, lambda n, p: _validate_request_ref(n, p, req_names), lambda n: n, path
    )


def _validate_constraint(con: dict, path: Path, req_names: dict) -> list[FieldError]:
    con = con or {}
    errs = _validate_request_refs(con.get("requests"), path.child("requests"), req_names)
    if con.get("matchAttribute") is not None:
        errs += c.validate_fully_qualified_name(con["matchAttribute"], path.child("matchAttribute"))
    elif con.get("distinctAttribute") is not None:
        errs += c.validate_fully_qualified_name(con["distinctAttribute"], path.child("distinctAttribute"))
    else:
        errs.append(
            fe.required(
                str(path),
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
            )
        )
    return errs


def _validate_claim_config(cfg: dict, path: Path, req_names: dict, stored: bool) -> list[FieldError]:
    cfg = cfg or {}
    return _validate_request_refs(
        cfg.get("requests"), path.child("requests"), req_names
    ) + c.validate_device_configuration(cfg, path, stored)


# --- status --------------------------------------------------------------------------------


def _shared_id(driver: str, pool: str, device: str, share: Any) -> str:
    base = f"{driver}/{pool}/{device}"
    return f"{base}/{share}" if share else base


def _validate_status(status: dict, old: dict, deleted: bool, req_names: dict, path: Path) -> list[FieldError]:
    reserved = status.get("reservedFor") or []
    errs = c.validate_set(
        reserved, c.RESERVED_FOR_MAX, _validate_consumer_ref, lambda r: r.get("uid") or "", path.child("reservedFor")
    )
    allocation = status.get("allocation")
    allocated: set[str] = set()
    if allocation is not None:
        for r in (allocation.get("devices") or {}).get("results") or []:
            allocated.add(
                _shared_id(r.get("driver") or "", r.get("pool") or "", r.get("device") or "", r.get("shareID"))
            )
    errs += c.validate_set(
        status.get("devices"),
        -1,
        lambda d, p: _validate_device_status(d, p, allocated),
        lambda d: _shared_id(d.get("driver") or "", d.get("pool") or "", d.get("device") or "", d.get("shareID")),
        path.child("devices"),
    )
    if reserved:
        if allocation is None:
            errs.append(
                fe.forbidden(str(path.child("reservedFor")), "may not be specified when `allocated` is not set")
            )
        elif deleted:
            old_uids = {_ref_key(r) for r in (old.get("reservedFor") or [])}
            if any(_ref_key(r) not in old_uids for r in reserved):
                errs.append(
                    fe.forbidden(
                        str(path.child("reservedFor")),
                        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                    )
                )
    old_alloc = old.get("allocation")
    if old_alloc is not None and allocation is not None:
        errs += names.validate_immutable(allocation, old_alloc, str(path.child("allocation")))
    elif allocation is not None:
        errs += _validate_allocation(allocation, path.child("allocation"), req_names)
    return errs


def _ref_key(r: dict) -> tuple:
    return (r.get("apiGroup") or "", r.get("resource") or "", r.get("name") or "", r.get("uid") or "")


def _validate_consumer_ref(ref: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for f in ("resource", "name", "uid"):
        if not (ref or {}).get(f):
            errs.append(fe.required(str(path.child(f))))
    return errs


def _validate_allocation(alloc: dict, path: Path, req_names: dict) -> list[FieldError]:
    devices = alloc.get("devices") or {}
    dp = path.child("devices")
    errs = c.validate_slice(
        devices.get("results"),
        c.ALLOCATION_RESULTS_MAX,
        lambda r, p: _validate_result(r, p, req_names),
        dp.child("results"),
    )
    errs += c.validate_slice(
        devices.get("config"),
        2 * c.DEVICE_CONFIG_MAX,
        lambda x, p: _validate_alloc_config(x, p, req_names),
        dp.child("config"),
    )
    if alloc.get("nodeSelector") is not None:
        errs += c.validate_node_selector(alloc["nodeSelector"], path.child("nodeSelector"))
    return errs


def _validate_result(r: dict, path: Path, req_names: dict) -> list[FieldError]:
    r = r or {}
    errs = _validate_request_ref(r.get("request") or "", path.child("request"), req_names)
    errs += c.validate_driver_name(r.get("driver") or "", path.child("driver"))
    errs += c.validate_pool_name(r.get("pool") or "", path.child("pool"))
    errs += c.validate_device_name(r.get("device") or "", path.child("device"))
    errs += c.validate_binding_parameters(r.get("bindingConditions"), r.get("bindingFailureConditions"), path)
    for i, t in enumerate(r.get("tolerations") or []):
        errs += c.validate_device_toleration(t, path.child("tolerations").index(i))
    if r.get("shareID") is not None:
        errs += c.validate_uid(r["shareID"], path.child("shareID"))
    return errs


def _validate_alloc_config(cfg: dict, path: Path, req_names: dict) -> list[FieldError]:
    cfg = cfg or {}
    source = cfg.get("source") or ""
    errs: list[FieldError] = []
    if not source:
        errs.append(fe.required(str(path.child("source"))))
    elif source not in ("FromClaim", "FromClass"):
        errs.append(fe.not_supported(str(path.child("source")), source, ["FromClaim", "FromClass"]))
    errs += _validate_request_refs(cfg.get("requests"), path.child("requests"), req_names)
    errs += c.validate_device_configuration(cfg, path, False)
    return errs


def _validate_device_status(d: dict, path: Path, allocated: set[str]) -> list[FieldError]:
    d = d or {}
    errs = c.validate_driver_name(d.get("driver") or "", path.child("driver"))
    errs += c.validate_pool_name(d.get("pool") or "", path.child("pool"))
    errs += c.validate_device_name(d.get("device") or "", path.child("device"))
    if d.get("shareID") is not None:
        errs += c.validate_uid(d["shareID"], path.child("shareID"))
    sid = _shared_id(d.get("driver") or "", d.get("pool") or "", d.get("device") or "", d.get("shareID"))
    if sid not in allocated:
        errs.append(fe.invalid(str(path), sid, "must be an allocated device in the claim"))
    conds = d.get("conditions") or []
    if len(conds) > c.ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        errs.append(fe.too_many(str(path.child("conditions")), len(conds), c.ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS))
    errs += c.validate_conditions(conds, path.child("conditions"))
    if d.get("data") is not None:
        errs += c.validate_raw_extension(
            d["data"], path.child("data"), False, c.ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH
        )
    nd = d.get("networkData")
    if nd is not None:
        np_ = path.child("networkData")
        if len(nd.get("interfaceName") or "") > c.NETWORK_INTERFACE_NAME_MAX:
            errs.append(fe.too_long(str(np_.child("interfaceName")), "", c.NETWORK_INTERFACE_NAME_MAX))
        if len(nd.get("hardwareAddress") or "") > c.NETWORK_HARDWARE_ADDRESS_MAX:
            errs.append(fe.too_long(str(np_.child("hardwareAddress")), "", c.NETWORK_HARDWARE_ADDRESS_MAX))
        errs += c.validate_set(
            nd.get("ips"), c.NETWORK_MAX_IPS, _validate_interface_address, lambda x: x, np_.child("ips")
        )
    return errs


def _validate_interface_address(addr: str, path: Path) -> list[FieldError]:
    import ipaddress

    try:
        iface = ipaddress.ip_interface(addr)
    except ValueError:
        return [
            fe.invalid(str(path), addr, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
        ]
    if "/" not in addr:
        return [
            fe.invalid(str(path), addr, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")
        ]
    if str(iface) != addr and iface.version == 6:
        return [fe.invalid(str(path), addr, f'must be in canonical form ("{iface}")')]
    return []
