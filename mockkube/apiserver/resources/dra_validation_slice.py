"""ResourceSlice validation (upstream ValidateResourceSlice / ValidateResourceSliceUpdate, v1 shape)."""

from __future__ import annotations

import re
from typing import Any

from mockkube.apiserver.resources import dra_validation_common as c
from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.fielderrors import FieldError, Path

_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")
_EXACTLY_ONE = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
_PER_DEVICE = (
    "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
    "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
)


def validate_resource_slice(obj: dict) -> list[FieldError]:
    errs = names.validate_object_meta(obj.get("metadata"), False, "metadata", names.name_is_dns_subdomain)
    return errs + _validate_spec(obj.get("spec") or {}, None, Path("spec"))


def validate_resource_slice_update(new: dict, old: dict) -> list[FieldError]:
    errs = names.validate_object_meta_update(new.get("metadata"), old.get("metadata"), "metadata")
    return errs + _validate_spec(new.get("spec") or {}, old.get("spec") or {}, Path("spec"))


def _validate_spec(spec: dict, old: dict | None, path: Path) -> list[FieldError]:
    errs = c.validate_driver_name(spec.get("driver") or "", path.child("driver"))
    errs += _validate_pool(spec.get("pool") or {}, path.child("pool"))
    if old is not None:
        errs += names.validate_immutable(
            (spec.get("pool") or {}).get("name") or "",
            (old.get("pool") or {}).get("name") or "",
            path.child("pool", "name"),
        )
        errs += names.validate_immutable(spec.get("driver") or "", old.get("driver") or "", path.child("driver"))
        errs += names.validate_immutable(spec.get("nodeName"), old.get("nodeName"), path.child("nodeName"))

    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            set_fields.append("`nodeName`")
            errs += c.validate_node_name(node_name, path.child("nodeName"))
        else:
            errs.append(
                fe.invalid(str(path.child("nodeName")), node_name, "must be either unset or set to a non-empty string")
            )
    sel = spec.get("nodeSelector")
    if sel is not None:
        set_fields.append("`nodeSelector`")
        errs += c.validate_node_selector(sel, path.child("nodeSelector"))
        terms = sel.get("nodeSelectorTerms") or []
        if len(terms) != 1:
            errs.append(
                fe.invalid(
                    str(path.child("nodeSelector", "nodeSelectorTerms")),
                    terms,
                    "must have exactly one node selector term",
                )
            )
    for flag in ("allNodes", "perDeviceNodeSelection"):
        v = spec.get(flag)
        if v is not None:
            if v:
                set_fields.append(f"`{flag}`")
            else:
                errs.append(fe.invalid(str(path.child(flag)), v, "must be either unset or set to true"))
    if not set_fields:
        errs.append(fe.required(str(path), _EXACTLY_ONE))
    elif len(set_fields) > 1:
        errs.append(
            fe.invalid(str(path), "{" + ", ".join(set_fields) + "}", _EXACTLY_ONE + ", but multiple fields are set")
        )

    devices = spec.get("devices")
    if spec.get("sharedCounters") is not None and devices is not None:
        errs.append(fe.invalid(str(path), "", "only one of `sharedCounters` or `devices` is allowed"))

    devices = devices or []
    advanced = any(d.get("taints") or d.get("consumesCounters") or _has_list_attributes(d) for d in devices)
    max_devices = c.SLICE_MAX_DEVICES_ADVANCED if advanced else c.SLICE_MAX_DEVICES
    old_devices = {d.get("name"): d for d in ((old or {}).get("devices") or [])}
    per_device = spec.get("perDeviceNodeSelection")
    errs += c.validate_set(
        devices,
        max_devices,
        lambda d, p: _validate_device(d, old_devices.get(d.get("name")) if old is not None else None, p, per_device),
        lambda d: d.get("name") or "",
        path.child("devices"),
    )
    errs += c.validate_set(
        spec.get("sharedCounters"),
        c.SLICE_MAX_COUNTER_SETS,
        _validate_counter_set,
        lambda s: s.get("name") or "",
        path.child("sharedCounters"),
    )
    return errs


def _has_list_attributes(device: dict) -> bool:
    return any(
        any(k in (a or {}) for k in ("bools", "ints", "strings", "versions"))
        for a in (device.get("attributes") or {}).values()
    )


def _validate_pool(pool: dict, path: Path) -> list[FieldError]:
    errs = c.validate_pool_name(pool.get("name") or "", path.child("name"))
    count = pool.get("resourceSliceCount") or 0
    if count <= 0:
        errs.append(fe.invalid(str(path.child("resourceSliceCount")), count, "must be greater than zero"))
    gen = pool.get("generation") or 0
    if gen < 0:
        errs.append(fe.invalid(str(path.child("generation")), gen, "must be greater than or equal to zero"))
    return errs


def _validate_counter_map(counters: Any, max_size: int, path: Path) -> list[FieldError]:
    return c.validate_map(counters, max_size, names.DNS1123_LABEL_MAX, c.validate_counter_name, _validate_counter, path)


def _validate_counter(counter: Any, path: Path) -> list[FieldError]:
    value = (counter or {}).get("value")
    if value is None:
        return [fe.required(str(path.child("value")))]
    return _check_quantity(value, path.child("value"))


def _check_quantity(value: Any, path: Path) -> list[FieldError]:
    try:
        c.parse_quantity(value)
    except c.BadQuantity as exc:
        return [fe.invalid(str(path), value, str(exc))]
    return []


def _validate_counter_set(cs: dict, path: Path) -> list[FieldError]:
    name = cs.get("name") or ""
    errs = [fe.required(str(path.child("name")))] if not name else c.validate_counter_name(name, path.child("name"))
    counters = cs.get("counters")
    if not counters:
        errs.append(fe.required(str(path.child("counters"))))
    else:
        errs += _validate_counter_map(counters, c.SLICE_MAX_COUNTERS_PER_SET, path.child("counters"))
    return errs


def _validate_consumption(cons: dict, path: Path) -> list[FieldError]:
    name = cons.get("counterSet") or ""
    errs = (
        [fe.required(str(path.child("counterSet")))]
        if not name
        else c.validate_counter_name(name, path.child("counterSet"))
    )
    counters = cons.get("counters")
    if not counters:
        errs.append(fe.required(str(path.child("counters"))))
    else:
        errs += _validate_counter_map(counters, c.SLICE_MAX_COUNTERS_PER_CONSUMPTION, path.child("counters"))
    return errs


def _num_attribute_values(device: dict) -> int:
    n = 0
    for a in (device.get("attributes") or {}).values():
        a = a or {}
        lists = sum(len(a.get(k) or []) for k in ("bools", "ints", "strings", "versions"))
        n += lists if lists else 1
    return n


def _validate_device(device: dict, old: dict | None, path: Path, per_device: Any) -> list[FieldError]:
    errs = c.validate_device_name(device.get("name") or "", path.child("name"))
    attrs = device.get("attributes") or {}
    caps = device.get("capacity") or {}
    total = len(attrs) + len(caps)
    if total > c.SLICE_MAX_ATTRS_AND_CAPS:
        errs.append(
            fe.invalid(
                str(path),
                total,
                f"the total number of attributes and capacities must not exceed {c.SLICE_MAX_ATTRS_AND_CAPS}",
            )
        )
    nvalues = _num_attribute_values(device)
    if nvalues > c.SLICE_MAX_ATTRIBUTE_VALUES:
        errs.append(
            fe.invalid(
                str(path),
                nvalues,
                f"the total number of attribute values must not exceed {c.SLICE_MAX_ATTRIBUTE_VALUES}",
            )
        )
    errs += c.validate_map(
        attrs, -1, c.ATTRIBUTE_KEY_MAX, c.validate_qualified_name, _validate_attribute, path.child("attributes")
    )
    multi = device.get("allowMultipleAllocations") is True
    if old is None or (old.get("capacity") or {}) != caps:
        errs += c.validate_map(
            caps,
            -1,
            c.ATTRIBUTE_KEY_MAX,
            c.validate_qualified_name,
            _validate_multi_capacity if multi else _validate_single_capacity,
            path.child("capacity"),
        )
    if old is None or (old.get("taints") or []) != (device.get("taints") or []):
        errs += c.validate_slice(
            device.get("taints"),
            c.DEVICE_TAINTS_MAX,
            lambda t, p: c.validate_device_taint(t, None, p),
            path.child("taints"),
        )
    errs += c.validate_set(
        device.get("consumesCounters"),
        c.SLICE_MAX_CONSUMPTIONS_PER_DEVICE,
        _validate_consumption,
        lambda x: x.get("counterSet") or "",
        path.child("consumesCounters"),
    )
    errs += _validate_device_node_selection(device, path, per_device)
    errs += c.validate_binding_parameters(device.get("bindingConditions"), device.get("bindingFailureConditions"), path)
    errs += _validate_node_allocatable_mappings(
        device.get("nodeAllocatableResourceMappings"), caps, path.child("nodeAllocatableResourceMappings")
    )
    return errs


def _validate_device_node_selection(device: dict, path: Path, per_device: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    if per_device:
        fields: list[str] = []
        nn = device.get("nodeName")
        if nn is not None:
            if nn:
                fields.append("`nodeName`")
                errs += c.validate_node_name(nn, path.child("nodeName"))
            else:
                errs.append(fe.invalid(str(path.child("nodeName")), nn, "must not be empty"))
        if device.get("nodeSelector") is not None:
            fields.append("`nodeSelector`")
            errs += c.validate_node_selector(device["nodeSelector"], path.child("nodeSelector"))
        an = device.get("allNodes")
        if an is not None:
            if an:
                fields.append("`allNodes`")
            else:
                errs.append(fe.invalid(str(path.child("allNodes")), an, "must be either unset or set to true"))
        if not fields:
            errs.append(fe.required(str(path), _PER_DEVICE))
        elif len(fields) > 1:
            errs.append(fe.invalid(str(path), "{" + ", ".join(fields) + "}", _PER_DEVICE))
    elif any(device.get(k) is not None for k in ("nodeName", "nodeSelector", "allNodes")):
        errs.append(
            fe.invalid(
                str(path),
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        )
    return errs


def _validate_string_value(v: Any, path: Path) -> list[FieldError]:
    if isinstance(v, str) and len(v.encode()) > c.ATTRIBUTE_MAX_VALUE_LENGTH:
        return [fe.too_long(str(path), "", c.ATTRIBUTE_MAX_VALUE_LENGTH)]
    return []


def _validate_version_value(v: Any, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not isinstance(v, str) or not _SEMVER.fullmatch(v):
        errs.append(fe.invalid(str(path), v, "must be a string compatible with semver.org spec 2.0.0"))
    errs += _validate_string_value(v, path)
    return errs


def _validate_attribute(attr: Any, path: Path) -> list[FieldError]:
    attr = attr or {}
    errs: list[FieldError] = []
    n = 0
    for k in ("bool", "int"):
        if attr.get(k) is not None:
            n += 1
    if attr.get("string") is not None:
        n += 1
        errs += _validate_string_value(attr["string"], path.child("string"))
    if attr.get("version") is not None:
        n += 1
        errs += _validate_version_value(attr["version"], path.child("version"))
    for k, item_fn in (
        ("bools", None),
        ("ints", None),
        ("strings", _validate_string_value),
        ("versions", _validate_version_value),
    ):
        vals = attr.get(k)
        if vals is None:
            continue
        n += 1
        if len(vals) == 0:
            errs.append(fe.invalid(str(path.child(k)), vals, "must not be empty if specified"))
        if item_fn:
            for i, v in enumerate(vals):
                errs += item_fn(v, path.child(k).index(i))
    if n == 0:
        errs.append(fe.invalid(str(path), "", "exactly one value must be specified"))
    elif n > 1:
        errs.append(fe.invalid(str(path), attr, "exactly one value must be specified"))
    return errs


def _validate_single_capacity(cap: Any, path: Path) -> list[FieldError]:
    cap = cap or {}
    errs = _capacity_value_errors(cap, path)
    if cap.get("requestPolicy") is not None:
        errs.append(fe.forbidden(str(path.child("requestPolicy")), "allowMultipleAllocations must be true"))
    return errs


def _capacity_value_errors(cap: dict, path: Path) -> list[FieldError]:
    if cap.get("value") is None:
        return [fe.required(str(path.child("value")))]
    return _check_quantity(cap["value"], path.child("value"))


def _validate_multi_capacity(cap: Any, path: Path) -> list[FieldError]:
    cap = cap or {}
    errs = _capacity_value_errors(cap, path)
    policy = cap.get("requestPolicy")
    if policy is None or errs:
        return errs
    return _validate_request_policy(c.parse_quantity(cap["value"]), policy, path.child("requestPolicy"))


def _parse_policy_values(policy: dict, path: Path) -> tuple[dict, list[FieldError]]:
    out: dict = {}
    errs: list[FieldError] = []
    for k in ("default",):
        if policy.get(k) is not None:
            errs += _check_quantity(policy[k], path.child(k))
            if not errs:
                out[k] = c.parse_quantity(policy[k])
    rng = policy.get("validRange")
    if rng is not None:
        out["validRange"] = {}
        for k in ("min", "max", "step"):
            if rng.get(k) is not None:
                e = _check_quantity(rng[k], path.child("validRange", k))
                errs += e
                if not e:
                    out["validRange"][k] = c.parse_quantity(rng[k])
    vals = []
    for i, v in enumerate(policy.get("validValues") or []):
        e = _check_quantity(v, path.child("validValues").index(i))
        errs += e
        if not e:
            vals.append(c.parse_quantity(v))
    out["validValues"] = vals
    return out, errs


def _validate_request_policy(max_cap: Any, policy: dict, path: Path) -> list[FieldError]:
    if policy.get("validValues") and policy.get("validRange") is not None:
        return [
            fe.forbidden(
                str(path),
                'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
            )
        ]
    parsed, errs = _parse_policy_values(policy, path)
    if errs:
        return errs
    default = parsed.get("default")
    if parsed["validValues"]:
        if default is None:
            return [fe.required(str(path.child("default")), "required when validValues is defined")]
        return _validate_valid_values(default, max_cap, parsed["validValues"], path.child("validValues"))
    if policy.get("validRange") is not None:
        if default is None:
            return [fe.required(str(path.child("default")), "required when validRange is defined")]
        return _validate_range(default, max_cap, parsed["validRange"], path.child("validRange"))
    return []


def _validate_valid_values(default: Any, max_cap: Any, values: list, path: Path) -> list[FieldError]:
    V = c.q_value
    errs: list[FieldError] = []
    for i in range(len(values) - 1):
        if V(values[i]) > V(values[i + 1]):
            errs.append(
                fe.invalid(str(path.index(i + 1)), c.q_str(values[i + 1]), "values must be sorted in ascending order")
            )
    found = [False]

    def item(opt: Any, p: Path) -> list[FieldError]:
        e = []
        if V(opt) > V(max_cap):
            e.append(fe.invalid(str(p), c.q_str(opt), f"option is larger than capacity value: {c.q_str(max_cap)}"))
        if V(opt) == V(default):
            found[0] = True
        return e

    errs += c.validate_set(values, c.REQUEST_POLICY_MAX_OPTIONS, item, lambda q: V(q), path)
    if not found[0]:
        errs.append(
            fe.invalid(str(path), c.q_str(default), "default value is not valid according to the requestPolicy")
        )
    return errs


def _validate_range(default: Any, max_cap: Any, rng: dict, path: Path) -> list[FieldError]:
    V, S = c.q_value, c.q_str
    lo, hi, step = rng.get("min"), rng.get("max"), rng.get("step")
    if lo is None:
        return [fe.required(str(path.child("min")), "required when validRange is defined")]
    errs: list[FieldError] = []
    if V(lo) > V(max_cap):
        errs.append(fe.invalid(str(path.child("min")), S(lo), f"min is larger than capacity value: {S(max_cap)}"))
    if V(default) < V(lo):
        errs.append(fe.invalid(str(path.child("default")), S(default), f"default is less than min: {S(lo)}"))
    if hi is not None:
        if V(lo) > V(hi):
            errs.append(fe.invalid(str(path.child("max")), S(lo), f"min is larger than max: {S(hi)}"))
        if V(hi) > V(max_cap):
            errs.append(fe.invalid(str(path.child("max")), S(hi), f"max is larger than capacity value: {S(max_cap)}"))
        if V(default) > V(hi):
            errs.append(fe.invalid(str(path.child("default")), S(default), f"default is more than max: {S(hi)}"))
    if step is not None:
        if V(step) <= 0:
            errs.append(fe.invalid(str(path.child("step")), S(step), "must be greater than zero"))
        else:
            added = V(lo) + V(step)
            if added > V(max_cap):
                errs.append(
                    fe.invalid(
                        str(path.child("step")),
                        S(step),
                        f"one step {_fmt_sum(lo, step)} is larger than capacity value: {S(max_cap)}",
                    )
                )
            for value in [default] + ([hi] if hi is not None else []):
                if (V(value) - V(lo)) % V(step) != 0:
                    errs.append(
                        fe.invalid(
                            str(path.child("step")),
                            S(value),
                            f"value is not a multiple of a given step ({S(step)}) from ({S(lo)})",
                        )
                    )
    return errs


def _fmt_sum(a: Any, b: Any) -> str:
    try:
        return c.q_str(a + b)
    except TypeError:
        return str(c.q_value(a) + c.q_value(b))


def _validate_node_allocatable_mappings(mappings: Any, caps: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, mapping in (mappings or {}).items():
        kp = path.key(name)
        if not names.is_node_allocatable_resource_name(name):
            errs.append(fe.invalid(str(kp), name, "must be a node allocatable resource name"))
        mapping = mapping or {}
        key = mapping.get("capacityKey")
        if key is not None:
            if key == "":
                errs.append(fe.invalid(str(kp.child("capacityKey")), "", "capacityKey must not be an empty string"))
            elif key not in caps:
                errs.append(fe.not_found(str(kp.child("capacityKey")), key))
        mult = mapping.get("allocationMultiplier")
        if mult is not None:
            e = _check_quantity(mult, kp.child("allocationMultiplier"))
            if e:
                errs += e
            elif c.q_value(c.parse_quantity(mult)) <= 0:
                errs.append(
                    fe.invalid(
                        str(kp.child("allocationMultiplier")), c.q_str(c.parse_quantity(mult)), "must be positive"
                    )
                )
    return errs
