"""Building blocks shared by the DRA validators (pkg/apis/resource/validation upstream).

Limits, name formats (driver, pool, device, request, qualified attribute names), CEL
compile checks, taints/tolerations, node selectors and the list/map helpers whose
"too many short-circuits" behaviour upstream relies on for DoS protection.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any, Callable, Iterable

from mockkube.machinery import fielderrors as fe
from mockkube.machinery import names
from mockkube.machinery.fielderrors import FieldError, Path

# Limits from k8s.io/api/resource/v1 (v1.36).
DEVICE_REQUESTS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
DEVICE_SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
DEVICE_TOLERATIONS_MAX = 16
DEVICE_TAINTS_MAX = 16
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64
SLICE_MAX_ATTRS_AND_CAPS = 32
SLICE_MAX_ATTRIBUTE_VALUES = 48
SLICE_MAX_COUNTER_SETS = 8
SLICE_MAX_COUNTERS_PER_SET = 32
SLICE_MAX_CONSUMPTIONS_PER_DEVICE = 2
SLICE_MAX_COUNTERS_PER_CONSUMPTION = 32
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
ATTRIBUTE_MAX_VALUE_LENGTH = 64
POOL_NAME_MAX_LENGTH = 253
DRIVER_NAME_MAX_LENGTH = 63
BINDING_CONDITIONS_MAX = 4
BINDING_FAILURE_CONDITIONS_MAX = 4
REQUEST_POLICY_MAX_OPTIONS = 10
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_INTERFACE_NAME_MAX = 256
NETWORK_HARDWARE_ADDRESS_MAX = 128
NETWORK_MAX_IPS = 16
DEVICE_TAINT_RULE_MAX_CONDITIONS = 8
ATTRIBUTE_KEY_MAX = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH

TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]  # sorted, as sets.List prints them
TOLERATION_OPERATORS = ["Equal", "Exists"]

ItemValidator = Callable[[Any, Path], list[FieldError]]


# --- collection helpers ------------------------------------------------------------------


def validate_slice(items: Any, max_size: int, item_fn: ItemValidator, path: Path) -> list[FieldError]:
    """A too-long list yields only the TooMany error (upstream's DoS short-circuit)."""
    items = items or []
    if max_size >= 0 and len(items) > max_size:
        return [fe.too_many(str(path), len(items), max_size)]
    errs: list[FieldError] = []
    for i, item in enumerate(items):
        errs += item_fn(item, path.index(i))
    return errs


def validate_set(
    items: Any, max_size: int, item_fn: ItemValidator, key_fn: Callable[[Any], Any], path: Path
) -> list[FieldError]:
    items = items or []
    if max_size >= 0 and len(items) > max_size:
        return [fe.too_many(str(path), len(items), max_size)]
    errs: list[FieldError] = []
    for i, item in enumerate(items):
        errs += item_fn(item, path.index(i))
    seen: set = set()
    for i, item in enumerate(items):
        key = key_fn(item)
        if key in seen:
            errs.append(fe.duplicate(str(path.index(i)), key))
        else:
            seen.add(key)
    return errs


def truncate_key(key: str, max_len: int) -> str:
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2 :]


def validate_map(
    m: Any,
    max_size: int,
    truncate_len: int,
    key_fn: Callable[[str, Path], list[FieldError]],
    item_fn: ItemValidator,
    path: Path,
) -> list[FieldError]:
    """Key errors are reported on the map's own path, item errors on ``path[key]``."""
    m = m or {}
    if max_size >= 0 and len(m) > max_size:
        return [fe.too_many(str(path), len(m), max_size)]
    errs: list[FieldError] = []
    for key, item in m.items():
        errs += key_fn(key, path)
        errs += item_fn(item, path.key(truncate_key(key, truncate_len)))
    return errs


# --- names ---------------------------------------------------------------------------------


def validate_driver_name(name: str, path: Path) -> list[FieldError]:
    """corevalidation.ValidateCSIDriverName: DNS subdomain (case-insensitive), at most 63 bytes."""
    if not name:
        return [fe.required(str(path))]
    errs: list[FieldError] = []
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        errs.append(fe.too_long(str(path), name, DRIVER_NAME_MAX_LENGTH))
    errs += [fe.invalid(str(path), name, m) for m in names.dns1123_subdomain(name.lower())]
    return errs


def validate_dns_label(name: str, path: Path) -> list[FieldError]:
    return [fe.invalid(str(path), name, m) for m in names.dns1123_label(name)]


def validate_dns_subdomain(name: str, path: Path) -> list[FieldError]:
    return [fe.invalid(str(path), name, m) for m in names.dns1123_subdomain(name)]


validate_device_name = validate_dns_label
validate_request_name = validate_dns_label
validate_counter_name = validate_dns_label


def validate_pool_name(name: str, path: Path) -> list[FieldError]:
    if not name:
        return [fe.required(str(path))]
    errs: list[FieldError] = []
    if len(name) > POOL_NAME_MAX_LENGTH:
        errs.append(fe.too_long(str(path), "", POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        errs += validate_dns_subdomain(part, path)
    return errs


def validate_device_class_ref(name: str, path: Path) -> list[FieldError]:
    if not name:
        return [fe.required(str(path))]
    return validate_dns_subdomain(name, path)


def validate_node_name(name: str, path: Path) -> list[FieldError]:
    return [fe.invalid(str(path), name, m) for m in names.name_is_dns_subdomain(name)]


def validate_c_identifier(ident: str, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(ident) > DEVICE_MAX_ID_LENGTH:
        errs.append(fe.too_long(str(path), "", DEVICE_MAX_ID_LENGTH))
    errs += [fe.invalid(str(path), ident, m) for m in names.c_identifier(ident)]
    return errs


def validate_qualified_name(name: str, path: Path) -> list[FieldError]:
    """Attribute/capacity keys: ``<c-identifier>`` or ``<driver-like domain>/<c-identifier>``."""
    parts = name.split("/")
    errs: list[FieldError] = []
    if len(parts) == 1:
        errs += validate_c_identifier(parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            errs.append(fe.invalid(str(path), "", "the domain must not be empty"))
        else:
            errs += validate_driver_name(parts[0], path)
        if not parts[1]:
            errs.append(fe.invalid(str(path), "", "the name must not be empty"))
        else:
            errs += validate_c_identifier(parts[1], path)
    else:
        errs.append(fe.invalid(str(path), name, "must not contain more than one slash"))
    return errs


def validate_fully_qualified_name(name: str, path: Path) -> list[FieldError]:
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(
            fe.invalid(str(path), name, "a fully qualified name must be a domain and a name separated by a slash")
        )
    return errs


def validate_uid(uid: str, path: Path) -> list[FieldError]:
    if not re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", uid or ""):
        if (
            re.fullmatch(r"(urn:uuid:)?\{?[0-9a-fA-F-]{32,36}\}?", uid or "")
            and len((uid or "").replace("-", "").replace("urn:uuid:", "").strip("{}")) == 32
        ):
            return [
                fe.invalid(
                    str(path),
                    uid,
                    "uid must be in RFC 4122 normalized form, "
                    "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
                )
            ]
        return [fe.invalid(str(path), uid, f"error validating uid: invalid UUID length: {len(uid or '')}")]
    if uid != uid.lower():
        return [
            fe.invalid(
                str(path),
                uid,
                "uid must be in RFC 4122 normalized form, "
                "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
            )
        ]
    return []


# --- quantities ----------------------------------------------------------------------------


class BadQuantity(ValueError):
    pass


def parse_quantity(value: Any) -> Any:
    """Parse with the shared machinery parser (resource.Quantity semantics)."""
    from mockkube.machinery.quantity import parse_quantity as _parse  # lands with another helper

    try:
        return _parse(value)
    except Exception as exc:  # noqa: BLE001 - any parse failure is a bad quantity
        raise BadQuantity(str(exc)) from None


def q_value(q: Any) -> Fraction:
    """The exact rational value (quantities are mantissa * 10**exponent)."""
    m, e = q.as_exact()
    return Fraction(m) * (Fraction(10) ** e)


def q_str(q: Any) -> str:
    canon = getattr(q, "canonical", None)
    return canon() if callable(canon) else str(q)


# --- CEL ----------------------------------------------------------------------------------


def validate_cel_expression(expression: str, path: Path, stored: bool = False) -> list[FieldError]:
    if stored:
        return []
    if len(expression) > CEL_EXPRESSION_MAX_LENGTH:
        return [fe.too_long(str(path), "", CEL_EXPRESSION_MAX_LENGTH)]
    if not expression:
        return [fe.required(str(path), "")]
    from mockkube.cel import CELError, compile_expression

    try:
        compiled = compile_expression(expression)
    except CELError as exc:
        # upstream prefixes only real compile errors; the result-type check reads as is
        plain = exc.message.startswith(("compilation failed", "must evaluate to"))
        msg = exc.message if plain else f"compilation failed: {exc.message}"
        return [fe.invalid(str(path), expression, msg)]
    if compiled.exceeds_cost_limit:
        return [fe.forbidden(str(path), "too complex, exceeds cost limit")]
    return []


def validate_selector(selector: Any, path: Path, stored: bool = False) -> list[FieldError]:
    cel = (selector or {}).get("cel")
    if cel is None:
        return [fe.required(str(path.child("cel")))]
    return validate_cel_expression(cel.get("expression") or "", path.child("cel", "expression"), stored)


def validate_selectors(selectors: Any, path: Path, stored: bool = False) -> list[FieldError]:
    return validate_slice(selectors, DEVICE_SELECTORS_MAX, lambda s, p: validate_selector(s, p, stored), path)


# --- opaque config ------------------------------------------------------------------------


def validate_raw_extension(raw: Any, path: Path, stored: bool, max_len: int) -> list[FieldError]:
    """The wire form is already JSON; re-encode it to measure it the way upstream measures Raw."""
    if raw is None:
        return [fe.required(str(path))]
    encoded = json.dumps(raw, separators=(",", ":"))
    if not stored and len(encoded) > max_len:
        return [fe.too_long(str(path), "", max_len)]
    if not isinstance(raw, dict):
        return [fe.invalid(str(path), "<value omitted>", "must be a valid JSON object")]
    return []


def validate_device_configuration(config: Any, path: Path, stored: bool) -> list[FieldError]:
    opaque = (config or {}).get("opaque")
    if opaque is None:
        return [fe.required(str(path.child("opaque")))]
    op = path.child("opaque")
    return validate_driver_name(opaque.get("driver") or "", op.child("driver")) + validate_raw_extension(
        opaque.get("parameters"), op.child("parameters"), stored, OPAQUE_PARAMETERS_MAX_LENGTH
    )


# --- taints and tolerations -------------------------------------------------------------------


def validate_device_taint(taint: Any, old_taint: Any, path: Path) -> list[FieldError]:
    taint = taint or {}
    errs = names.validate_label_name(taint.get("key") or "", path.child("key"))
    value = taint.get("value") or ""
    if value:
        errs += names.validate_label_value(value, path.child("value"))
    effect = taint.get("effect") or ""
    if old_taint is None or (old_taint.get("effect") or "") != effect:
        if not effect:
            errs.append(fe.required(str(path.child("effect"))))
        elif effect not in TAINT_EFFECTS:
            errs.append(fe.not_supported(str(path.child("effect")), effect, TAINT_EFFECTS))
    return errs


def validate_device_toleration(tol: Any, path: Path) -> list[FieldError]:
    tol = tol or {}
    errs: list[FieldError] = []
    key = tol.get("key") or ""
    if key:
        errs += names.validate_label_name(key, path.child("key"))
    op = tol.get("operator") or ""
    value = tol.get("value") or ""
    if op == "Exists":
        if value:
            errs.append(fe.invalid(str(path.child("value")), value, "must be empty for operator `Exists`"))
    elif op == "Equal":
        errs += names.validate_label_value(value, path.child("value"))
    elif op == "":
        errs.append(fe.required(str(path.child("operator"))))
    else:
        errs.append(fe.not_supported(str(path.child("operator")), op, TOLERATION_OPERATORS))
    effect = tol.get("effect") or ""
    if effect and effect not in TAINT_EFFECTS:
        errs.append(fe.not_supported(str(path.child("effect")), effect, TAINT_EFFECTS))
    return errs


def validate_tolerations(tols: Any, path: Path) -> list[FieldError]:
    return validate_slice(tols, DEVICE_TOLERATIONS_MAX, validate_device_toleration, path)


def validate_binding_parameters(conds: Any, failure: Any, path: Path) -> list[FieldError]:
    conds = list(conds or [])
    failure = list(failure or [])
    errs = validate_slice(conds, BINDING_CONDITIONS_MAX, names.validate_label_name, path.child("bindingConditions"))
    errs += validate_slice(
        failure, BINDING_FAILURE_CONDITIONS_MAX, names.validate_label_name, path.child("bindingFailureConditions")
    )
    seen: set = set()
    for i, c in enumerate(conds):
        if c in seen:
            errs.append(fe.duplicate(str(path.child("bindingConditions").index(i)), c))
        seen.add(c)
    seen_f: set = set()
    for i, c in enumerate(failure):
        p = path.child("bindingFailureConditions").index(i)
        if c in seen_f:
            errs.append(fe.duplicate(str(p), c))
        seen_f.add(c)
        if c in conds:
            errs.append(fe.invalid(str(p), c, "bindingFailureConditions must not overlap with bindingConditions"))
    if not conds and failure:
        errs.append(
            fe.invalid(
                str(path.child("bindingConditions")),
                conds,
                "bindingConditions are required to use bindingFailureConditions",
            )
        )
    if not failure and conds:
        errs.append(
            fe.invalid(
                str(path.child("bindingFailureConditions")),
                failure,
                "bindingFailureConditions are required to use bindingConditions",
            )
        )
    return errs


# --- node selectors (corevalidation.ValidateNodeSelector) ---------------------------------------


def _validate_node_selector_requirement(req: Any, path: Path) -> list[FieldError]:
    req = req or {}
    op = req.get("operator") or ""
    values = list(req.get("values") or [])
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(fe.required(str(path.child("values")), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                fe.forbidden(
                    str(path.child("values")), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                fe.required(str(path.child("values")), "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(fe.invalid(str(path.child("operator")), op, "not a valid selector operator"))
    errs += names.validate_label_name(req.get("key") or "", path.child("key"))
    for i, v in enumerate(values):
        errs += [fe.invalid(str(path.child("values").index(i)), v, m) for m in names.label_value(v)]
    return errs


def _validate_node_field_requirement(req: Any, path: Path) -> list[FieldError]:
    req = req or {}
    op = req.get("operator") or ""
    values = list(req.get("values") or [])
    errs: list[FieldError] = []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                fe.required(
                    str(path.child("values")),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(fe.invalid(str(path.child("operator")), op, "not a valid selector operator"))
    key = req.get("key") or ""
    if key != "metadata.name":
        errs.append(fe.invalid(str(path.child("key")), key, "not a valid field selector key"))
    else:
        for i, v in enumerate(values):
            errs += [fe.invalid(str(path.child("values").index(i)), v, m) for m in names.name_is_dns_subdomain(v)]
    return errs


def validate_node_selector(sel: Any, path: Path) -> list[FieldError]:
    terms = (sel or {}).get("nodeSelectorTerms") or []
    tp = path.child("nodeSelectorTerms")
    if not terms:
        return [fe.required(str(tp), "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        term = term or {}
        for j, r in enumerate(term.get("matchExpressions") or []):
            errs += _validate_node_selector_requirement(r, tp.index(i).child("matchExpressions").index(j))
        for j, r in enumerate(term.get("matchFields") or []):
            errs += _validate_node_field_requirement(r, tp.index(i).child("matchFields").index(j))
    return errs


# --- conditions (metav1validation.ValidateConditions) --------------------------------------------

_CONDITION_STATUSES = ["False", "True", "Unknown"]
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_MSG = names.regex_error(
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
    _REASON_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
    "ReasonA,ReasonB",
    "ReasonA:ReasonB",
)


def validate_conditions(conditions: Any, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set = set()
    for i, c in enumerate(conditions or []):
        c = c or {}
        p = path.index(i)
        ctype = c.get("type") or ""
        errs += names.validate_label_name(ctype, p.child("type"))
        if ctype in seen:
            errs.append(fe.duplicate(str(p.child("type")), ctype))
        seen.add(ctype)
        status = c.get("status") or ""
        if status not in _CONDITION_STATUSES:
            errs.append(fe.not_supported(str(p.child("status")), status, _CONDITION_STATUSES))
        gen = c.get("observedGeneration")
        if isinstance(gen, int) and gen < 0:
            errs.append(fe.invalid(str(p.child("observedGeneration")), gen, names.IS_NEGATIVE_MSG))
        if not c.get("lastTransitionTime"):
            errs.append(fe.required(str(p.child("lastTransitionTime")), "must be set"))
        reason = c.get("reason") or ""
        if not reason:
            errs.append(fe.required(str(p.child("reason")), "must be set"))
        else:
            if not re.fullmatch(_REASON_FMT, reason):
                errs.append(fe.invalid(str(p.child("reason")), reason, _REASON_MSG))
            if len(reason) > 1024:
                errs.append(fe.too_long(str(p.child("reason")), reason, 1024))
        msg = c.get("message") or ""
        if len(msg) > 32768:
            errs.append(fe.too_long(str(p.child("message")), msg, 32768))
    return errs


def iter_items(x: Any) -> Iterable:
    return x or []
