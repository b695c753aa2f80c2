"""Structural schemas of custom resources: validation, pruning and defaulting.

A CustomResourceDefinition version's ``openAPIV3Schema`` is checked with ``jsonschema``
after translating the Kubernetes extensions (``nullable``, ``x-kubernetes-int-or-string``,
``x-kubernetes-preserve-unknown-fields``); errors are reported as kube-apiserver's
``apiextensions-apiserver/pkg/apiserver/validation`` words them. Pruning and defaulting
walk the schema as ``structuralpruning``/``structuraldefaulting`` do.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema

from mockkube.machinery import fielderrors as fe
from mockkube.machinery import goregexp

_META_FIELDS = ("apiVersion", "kind", "metadata")
_GO_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def _go_type(value: Any) -> str:
    return _GO_TYPES.get(type(value), "object")


def to_json_schema(node: dict) -> dict:
    """The JSON Schema equivalent of one structural schema node."""
    out: dict[str, Any] = {}
    for key in (
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "multipleOf",
        "required",
        "format",
    ):
        if key in node:
            out[key] = node[key]
    # draft 4 style booleans for exclusive bounds
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(key), bool):
            out[key] = out.pop(bound) if out.pop(key) and bound in out else None
            if out[key] is None:
                del out[key]
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    elif "type" in node:
        out["type"] = [node["type"]]
    if "type" in out and node.get("nullable"):
        out["type"] = out["type"] + ["null"]
        if "enum" in out:
            out["enum"] = list(out["enum"]) + [None]
    if "properties" in node:
        out["properties"] = {k: to_json_schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = to_json_schema(node["additionalProperties"])
    if "items" in node and isinstance(node["items"], dict):
        out["items"] = to_json_schema(node["items"])
    for key in ("allOf", "anyOf", "oneOf"):
        if key in node:
            out[key] = [to_json_schema(s) for s in node[key]]
    if "not" in node:
        out["not"] = to_json_schema(node["not"])
    return out


# the string formats kube-openapi's strfmt registry checks (unknown formats are ignored)
_FORMATS = jsonschema.FormatChecker(formats=())
_RE = {
    "date-time": r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$",
    "datetime": r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$",
    "date": r"^\d{4}-\d{2}-\d{2}$",
    "uuid": r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$",
    "uuid3": r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$",
    "uuid4": r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$",
    "uuid5": r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$",
    "mac": r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$",
    "hostname": r"^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$",
    "email": r"^[^@\s]+@[^@\s]+$",
    "duration": r"^([-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w))+$|^0$",
    "hexcolor": r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
}


def _checker(fmt: str, rx: str) -> None:
    import re

    pat = re.compile(rx)
    _FORMATS.checks(fmt)(lambda v: not isinstance(v, str) or bool(pat.match(v)))


for _fmt, _rx in _RE.items():
    _checker(_fmt, _rx)


@_FORMATS.checks("byte")
def _is_byte(v: Any) -> bool:
    from mockkube.machinery import gobase64

    return not isinstance(v, str) or not gobase64.error(v)  # kube-openapi's IsBase64: StdEncoding


def _ip_check(version: int, network: bool) -> Any:
    def check(v: Any) -> bool:
        import ipaddress

        if not isinstance(v, str):
            return True
        try:
            got = ipaddress.ip_network(v, strict=False) if network else ipaddress.ip_address(v)
        except ValueError:
            return False
        return not version or got.version == version

    return check


_FORMATS.checks("ipv4")(_ip_check(4, False))
_FORMATS.checks("ipv6")(_ip_check(6, False))
_FORMATS.checks("cidr")(_ip_check(0, True))


@_FORMATS.checks("uri")
def _is_uri(v: Any) -> bool:
    from urllib.parse import urlsplit

    if not isinstance(v, str):
        return True
    try:
        return bool(urlsplit(v).scheme)
    except ValueError:
        return False


def _path(base: str, parts: Any) -> str:
    out = base
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _go_pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Any:
    """``pattern`` as kube-openapi applies it: Go's regexp, unanchored."""
    if not validator.is_type(instance, "string"):
        return
    try:
        found = goregexp.compile(pattern).search(instance)
    except goregexp.RegexpError:
        found = False  # refused when the CRD was written; a stored one matches nothing
    if not found:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _go_pattern})


def validate(obj: dict, schema: dict) -> list[fe.FieldError]:
    """Field errors of ``obj`` against a version's openAPIV3Schema (metadata excluded)."""
    body = {k: v for k, v in obj.items() if k not in _META_FIELDS}
    sub = dict(schema)
    sub["properties"] = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _META_FIELDS}
    sub["required"] = [r for r in schema.get("required") or () if r not in _META_FIELDS]
    validator = _Validator(to_json_schema(sub), format_checker=_FORMATS)
    errs: list[fe.FieldError] = []
    for e in sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.absolute_path]):
        errs.extend(_field_errors(e))
    return errs


def _field_errors(e: jsonschema.ValidationError) -> list[fe.FieldError]:
    path = _path("", e.absolute_path)
    shown = path or "<root>"
    v, kw = e.instance, e.validator
    if kw == "required":
        missing = e.message.split("'")[1] if "'" in e.message else ""
        return [fe.required(_path(path, [missing]) if missing else shown)]
    if kw == "type":
        want = [t for t in e.validator_value if t != "null"]
        return [
            fe.type_invalid(shown, _go_type(v), f'{shown} in body must be of type {" or ".join(want)}: "{_go_type(v)}"')
        ]
    if kw == "enum":
        return [fe.not_supported(shown, v, [x for x in e.validator_value if x is not None])]
    if kw == "minimum":
        return [fe.invalid(shown, v, f"{shown} in body should be greater than or equal to {e.validator_value}")]
    if kw == "maximum":
        return [fe.invalid(shown, v, f"{shown} in body should be less than or equal to {e.validator_value}")]
    if kw == "exclusiveMinimum":
        return [fe.invalid(shown, v, f"{shown} in body should be greater than {e.validator_value}")]
    if kw == "exclusiveMaximum":
        return [fe.invalid(shown, v, f"{shown} in body should be less than {e.validator_value}")]
    if kw == "maxLength":
        return [fe.too_long(shown, v, e.validator_value)]
    if kw == "minLength":
        return [fe.invalid(shown, v, f"{shown} in body should be at least {e.validator_value} chars long")]
    if kw == "pattern":
        return [fe.invalid(shown, v, f"{shown} in body should match '{e.validator_value}'")]
    if kw == "maxItems":
        return [fe.too_many(shown, len(v), e.validator_value)]
    if kw == "minItems":
        return [fe.invalid(shown, v, f"{shown} in body should have at least {e.validator_value} items")]
    if kw == "uniqueItems":
        return [fe.duplicate(shown, v)]
    if kw == "format":
        return [fe.invalid(shown, v, f'{shown} in body must be of type {e.validator_value}: "{v}"')]
    return [fe.invalid(shown, v, e.message)]


def prune(value: Any, node: dict | None) -> Any:
    """Drop fields the schema does not specify (unless it preserves unknown fields)."""
    if node is None:
        return value
    if isinstance(value, dict):
        props = node.get("properties")
        addl = node.get("additionalProperties")
        if props is None and not isinstance(addl, dict):
            return (
                value
                if node.get("x-kubernetes-preserve-unknown-fields") or addl is True
                else ({} if node.get("type") == "object" else value)
            )
        for k in list(value):
            if props is not None and k in props:
                value[k] = prune(value[k], props[k])
            elif isinstance(addl, dict):
                value[k] = prune(value[k], addl)
            elif not node.get("x-kubernetes-preserve-unknown-fields"):
                del value[k]
        return value
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [prune(v, node["items"]) for v in value]
    return value


def prune_object(obj: dict, schema: dict) -> None:
    """Prune a custom resource in place; apiVersion, kind and metadata are never pruned."""
    top = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _META_FIELDS}
    for k in list(obj):
        if k in _META_FIELDS:
            continue
        if k in top:
            obj[k] = prune(obj[k], top[k])
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            del obj[k]


def apply_defaults(value: Any, node: dict | None) -> None:
    """Set ``default`` values of missing properties, depth first, as structuraldefaulting."""
    if node is None:
        return
    if isinstance(value, dict):
        for k, sub in (node.get("properties") or {}).items():
            if k in _META_FIELDS and node.get("_root"):
                continue
            if k not in value and "default" in sub:
                value[k] = copy.deepcopy(sub["default"])
            if k in value:
                apply_defaults(value[k], sub)
        addl = node.get("additionalProperties")
        if isinstance(addl, dict):
            for k, v in value.items():
                apply_defaults(v, addl)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for v in value:
            apply_defaults(v, node["items"])


def default_object(obj: dict, schema: dict) -> None:
    """Apply defaults to a custom resource in place (metadata excluded)."""
    apply_defaults(obj, dict(schema, _root=True))


def prune_unknown(obj: dict, schema: dict) -> list[str]:
    """Prune ``obj`` in place as the custom resource decoder does and list what went, as
    ``unknown field "spec.foo"`` (the texts of fieldValidation Strict and Warn).

    ``x-kubernetes-embedded-resource`` objects keep apiVersion, kind and metadata."""
    found: list[str] = []
    top = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _META_FIELDS}
    for k in list(obj):
        if k in _META_FIELDS:
            continue
        if k in top:
            obj[k] = _prune_report(obj[k], top[k], k, found)
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            found.append(f'unknown field "{k}"')
            del obj[k]
    return found


def _prune_report(value: Any, node: dict, path: str, found: list[str]) -> Any:
    if isinstance(value, dict):
        props = node.get("properties")
        addl = node.get("additionalProperties")
        preserve = node.get("x-kubernetes-preserve-unknown-fields") or addl is True
        embedded = node.get("x-kubernetes-embedded-resource")
        for k in list(value):
            sub = f"{path}.{k}"
            if props is not None and k in props:
                value[k] = _prune_report(value[k], props[k], sub, found)
            elif isinstance(addl, dict):
                value[k] = _prune_report(value[k], addl, sub, found)
            elif embedded and k in _META_FIELDS:
                continue
            elif not preserve:
                found.append(f'unknown field "{sub}"')
                del value[k]
        return value
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [_prune_report(v, node["items"], f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


class _GoMap:
    """A map key tuple shown as Go's %#v of map[string]interface{} (Duplicate value messages)."""

    def __init__(self, keys: dict) -> None:
        import json

        self.text = (
            "map[string]interface {}{"
            + ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(keys.items()))
            + "}"
        )

    def __str__(self) -> str:
        return self.text


def list_errors(obj: dict, schema: dict) -> list[fe.FieldError]:
    """Duplicates in ``x-kubernetes-list-type: set`` and ``map`` lists (upstream's
    ``validation.ValidateListSetsAndMaps``)."""
    errs: list[fe.FieldError] = []
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _META_FIELDS}
    for k, sub in props.items():
        if k in obj:
            _lists(obj[k], sub, k, errs)
    return errs


def _lists(value: Any, node: dict, path: str, errs: list[fe.FieldError]) -> None:
    import json

    if isinstance(value, dict):
        props = node.get("properties") or {}
        addl = node.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) if k in props else (addl if isinstance(addl, dict) else None)
            if sub is not None:
                _lists(v, sub, f"{path}.{k}", errs)
    elif isinstance(value, list):
        lt = node.get("x-kubernetes-list-type")
        seen: set[str] = set()
        keys = node.get("x-kubernetes-list-map-keys") or []
        for i, item in enumerate(value):
            if lt == "set":
                mark = json.dumps(item, sort_keys=True)
                if mark in seen:
                    errs.append(fe.duplicate(f"{path}[{i}]", item))
                seen.add(mark)
            elif lt == "map" and keys and isinstance(item, dict):
                kv = {k: item.get(k) for k in keys if k in item}
                mark = json.dumps(kv, sort_keys=True)
                if mark in seen:
                    errs.append(fe.duplicate(f"{path}[{i}]", _GoMap(kv)))
                seen.add(mark)
            if isinstance(node.get("items"), dict):
                _lists(item, node["items"], f"{path}[{i}]", errs)


def embedded_errors(obj: dict, schema: dict) -> list[fe.FieldError]:
    """``x-kubernetes-embedded-resource`` objects need apiVersion and kind (upstream's
    ``validation.ValidateEmbeddedResources``)."""
    errs: list[fe.FieldError] = []
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in _META_FIELDS}
    for k, sub in props.items():
        if k in obj:
            _embedded(obj[k], sub, k, errs)
    return errs


def _embedded(value: Any, node: dict, path: str, errs: list[fe.FieldError]) -> None:
    if isinstance(value, dict):
        if node.get("x-kubernetes-embedded-resource"):
            for key in ("apiVersion", "kind"):
                if not value.get(key):
                    errs.append(fe.required(f"{path}.{key}", "must not be empty"))
        props = node.get("properties") or {}
        addl = node.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) if k in props else (addl if isinstance(addl, dict) else None)
            if sub is not None:
                _embedded(v, sub, f"{path}.{k}", errs)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, v in enumerate(value):
            _embedded(v, node["items"], f"{path}[{i}]", errs)
