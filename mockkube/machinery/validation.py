"""Structural validation: what kube-apiserver's decode step rejects before any strategy runs.

kube-apiserver decodes a request body into the Go type of the resource with
``sigs.k8s.io/json``. Two kinds of finding come out of that step:

* **type errors** (a string where a list belongs, ``"abc"`` as a quantity): decoding fails
  and the request gets a 400 BadRequest naming the first one, whatever ``fieldValidation`` is;
* **unknown fields** (strict errors): a 400 with every one of them under
  ``fieldValidation=Strict``, ``Warning`` headers under ``Warn``, nothing under ``Ignore``.

Both are reported here with upstream's wording. ``null`` is accepted everywhere, as Go's
decoder ignores it. The schema tree is compiled once per definition into small ``_Shape``
objects so that a check is a single walk over the object.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field

from mockkube.machinery import gobase64
from mockkube.machinery.errors import APIError, bad_request
from mockkube.machinery.schema import Node, definitions

_REF = "#/$defs/"

# shape kinds
_ANY, _STRUCT, _MAP, _ARRAY, _STRING, _BYTES, _INT, _NUMBER, _BOOL, _QUANTITY, _INTORSTR, _TIME = range(12)

_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_QUANTITY_NUMBER_RE = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$")
_QUANTITY_SUFFIX_RE = re.compile(r"^(?:|[numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)$")
QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_RFC3339_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00"

_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


class _Shape:
    """Precomputed facts about one schema node: what JSON it accepts, its Go type name."""

    __slots__ = ("kind", "go", "struct", "fields", "elem", "lo", "hi", "micro")

    def __init__(self) -> None:
        self.kind = _ANY
        self.go = ""  # Go type as reflect prints it: v1.PodSpec, []v1.Container, int32
        self.struct = ""  # for structs: the bare type name (PodSpec)
        self.fields: dict[str, _Shape] = {}
        self.elem: _Shape | None = None
        self.lo = self.hi = 0
        self.micro = False


_by_name: dict[str, _Shape] = {}
_by_id: dict[int, tuple[dict, _Shape]] = {}


def _go_name(defname: str) -> str:
    """``io.k8s.api.core.v1.PodSpec`` -> ``v1.PodSpec``."""
    parts = defname.split(".")
    return f"{parts[-2]}.{parts[-1]}" if len(parts) >= 2 else defname


def _types(raw: dict) -> list[str]:
    t = raw.get("type")
    if t is None:
        return []
    if isinstance(t, str):
        return [t]
    return [x for x in t if x != "null"]


def _compile_name(name: str) -> _Shape:
    shape = _by_name.get(name)
    if shape is not None:
        return shape
    shape = _Shape()
    _by_name[name] = shape  # registered before filling: recursive schemas terminate
    raw = definitions()[name]
    last = name.rsplit(".", 1)[-1]
    if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
        shape.kind, shape.go = _QUANTITY, "resource.Quantity"
    elif name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
        shape.kind, shape.go = _INTORSTR, "int32"  # the type its UnmarshalJSON reports
    elif raw.get("format") == "date-time" and _types(raw) == ["string"]:
        shape.kind, shape.go, shape.micro = _TIME, "string", last == "MicroTime"
    else:
        _fill(shape, raw)
        if shape.kind == _STRUCT:
            shape.go, shape.struct = _go_name(name), last
    return shape


def _compile_raw(raw: dict) -> _Shape:
    ref = raw.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return _compile_name(ref[len(_REF) :])
    hit = _by_id.get(id(raw))
    if hit is not None and hit[0] is raw:
        return hit[1]
    shape = _Shape()
    _by_id[id(raw)] = (raw, shape)
    _fill(shape, raw)
    return shape


def _fill(shape: _Shape, raw: dict) -> None:
    if "oneOf" in raw:  # string-or-number style unions other than the two known ones
        return
    types = _types(raw)
    t = types[0] if len(types) == 1 else ""
    if t == "object":
        props = raw.get("properties")
        addl = raw.get("additionalProperties")
        if props:
            shape.kind = _STRUCT
            shape.go = shape.struct = "struct"
            shape.fields = {k: _compile_raw(v) for k, v in props.items()}
        elif isinstance(addl, dict):
            shape.kind = _MAP
            shape.elem = _compile_raw(addl)
            shape.go = "map[string]" + (shape.elem.go or "interface {}")
        # an object with neither (RawExtension, FieldsV1) takes any JSON: leave _ANY
    elif t == "array":
        items = raw.get("items")
        shape.kind = _ARRAY
        shape.elem = _compile_raw(items) if isinstance(items, dict) else _Shape()
        shape.go = "[]" + (shape.elem.go or "interface {}")
    elif t == "string":
        if raw.get("format") == "byte":
            shape.kind, shape.go = _BYTES, "[]uint8"
        else:
            shape.kind, shape.go = _STRING, "string"
    elif t == "integer":
        fmt = raw.get("format", "int64")
        shape.kind, shape.go = _INT, fmt if fmt in _INT_RANGE else "int64"
        shape.lo, shape.hi = _INT_RANGE.get(fmt, _INT_RANGE["int64"])
    elif t == "number":
        shape.kind, shape.go = _NUMBER, "float32" if raw.get("format") == "float" else "float64"
    elif t == "boolean":
        shape.kind, shape.go = _BOOL, "bool"


def _root_shape(root: Node) -> _Shape:
    if root.name and root.raw is definitions().get(root.name):
        return _compile_name(root.name)
    return _compile_raw(root.raw)


@dataclass
class Structure:
    """What the decode step found: type errors (first one wins upstream) and unknown fields."""

    type_errors: list[str] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.type_errors and not self.unknown_fields


class _Fatal(Exception):
    """An error returned (not saved) by a custom UnmarshalJSON: decoding stops there."""


def json_kind(value: object) -> str:
    """The JSON value kind encoding/json names in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _number_text(value: float | int) -> str:
    """The number as Go quotes it (the original literal is gone; repr is the closest)."""
    return repr(value)


_MISSING_FIELD = object()
# what Go decodes a null list item into, by element kind (factories for mutable zeros)
_ZERO_ITEMS: dict = {_STRUCT: dict, _MAP: dict, _STRING: "", _INT: 0, _NUMBER: 0, _BOOL: False}


class _Walker:
    __slots__ = ("saved", "unknown", "quantities", "unknown_refs", "nulls", "byte_refs")

    def __init__(self) -> None:
        self.saved: list[str] = []
        self.unknown: list[str] = []
        self.quantities: list[tuple] = []  # (container, key) of every quantity seen
        self.unknown_refs: list[tuple] = []  # (container, key) of every unknown field
        self.nulls: list[tuple] = []  # (container, key, zero) of nulls a Go decode replaces
        self.byte_refs: list[tuple] = []  # (container, key) of every base64 []byte string

    def type_error(self, what: str, go: str, struct: str, stack: list[str]) -> str:
        if struct or stack:
            return f"json: cannot unmarshal {what} into Go struct field {struct}.{'.'.join(stack)} of type {go}"
        return f"json: cannot unmarshal {what} into Go value of type {go}"

    def walk(self, value: object, shape: _Shape, path: str, struct: str, stack: list[str]) -> None:
        """``path`` is the strict-error path (keys, map keys and [i]); ``stack`` the struct
        fields only, as Go's errorContext keeps them for type errors."""
        if value is None:
            return
        kind = shape.kind
        if kind == _ANY:
            return
        if kind == _STRUCT:
            if not isinstance(value, dict):
                self.saved.append(self.type_error(json_kind(value), shape.go, struct, stack))
                return
            fields = shape.fields
            prefix = path + "." if path else ""
            for key, sub in value.items():
                child = fields.get(key)
                if child is None:
                    self.unknown.append(f'unknown field "{prefix}{key}"')
                    self.unknown_refs.append((value, key))
                    continue
                if sub is None:
                    self.nulls.append((value, key, _MISSING_FIELD))
                    continue
                if child.kind == _ANY:
                    continue
                if child.kind == _QUANTITY:
                    self.quantities.append((value, key))
                elif child.kind == _BYTES:
                    self.byte_refs.append((value, key))
                stack.append(key)
                self.walk(sub, child, prefix + key, shape.struct, stack)
                stack.pop()
            return
        if kind == _MAP:
            if not isinstance(value, dict):
                self.saved.append(self.type_error(json_kind(value), shape.go, struct, stack))
                return
            elem = shape.elem
            if elem is None or elem.kind == _ANY:
                return
            prefix = path + "." if path else ""
            for key, sub in value.items():
                if sub is None and elem.kind in _ZERO_ITEMS:
                    self.nulls.append((value, key, _ZERO_ITEMS[elem.kind]))
                if sub is not None:
                    if elem.kind == _QUANTITY:
                        self.quantities.append((value, key))
                    elif elem.kind == _BYTES:
                        self.byte_refs.append((value, key))
                    self.walk(sub, elem, prefix + key, struct, stack)
            return
        if kind == _ARRAY:
            if not isinstance(value, list):
                self.saved.append(self.type_error(json_kind(value), shape.go, struct, stack))
                return
            elem = shape.elem
            if elem is None or elem.kind == _ANY:
                return
            for i, sub in enumerate(value):
                if sub is None and elem.kind in _ZERO_ITEMS:
                    self.nulls.append((value, i, _ZERO_ITEMS[elem.kind]))
                if sub is not None:
                    if elem.kind == _QUANTITY:
                        self.quantities.append((value, i))
                    elif elem.kind == _BYTES:
                        self.byte_refs.append((value, i))
                    self.walk(sub, elem, f"{path}[{i}]", struct, stack)
            return
        if kind == _STRING:
            if not isinstance(value, str):
                self.saved.append(self.type_error(json_kind(value), "string", struct, stack))
            return
        if kind == _INT:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.saved.append(self.type_error(json_kind(value), shape.go, struct, stack))
            elif isinstance(value, float) or not (shape.lo <= value <= shape.hi):
                self.saved.append(self.type_error(f"number {_number_text(value)}", shape.go, struct, stack))
            return
        if kind == _NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.saved.append(self.type_error(json_kind(value), shape.go, struct, stack))
            return
        if kind == _BOOL:
            if not isinstance(value, bool):
                self.saved.append(self.type_error(json_kind(value), "bool", struct, stack))
            return
        if kind == _BYTES:
            if isinstance(value, str):
                bad = gobase64.error(value)
                if bad:
                    self.saved.append(bad)
            elif isinstance(value, list):  # Go decodes a JSON array of numbers into []byte too
                for el in value:
                    if el is None:
                        continue
                    if isinstance(el, bool) or not isinstance(el, (int, float)):
                        self.saved.append(self.type_error(json_kind(el), "uint8", struct, stack))
                    elif isinstance(el, float) or not 0 <= el <= 255:
                        self.saved.append(self.type_error(f"number {_number_text(el)}", "uint8", struct, stack))
            else:
                self.saved.append(self.type_error(json_kind(value), "[]uint8", struct, stack))
            return
        if kind == _QUANTITY:
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise _Fatal(QUANTITY_FORMAT_ERROR)
            text = value.strip() if isinstance(value, str) else _number_text(value)
            if not valid_quantity(text):
                raise _Fatal(QUANTITY_FORMAT_ERROR)
            return
        if kind == _INTORSTR:
            if isinstance(value, str):
                return
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _Fatal(self.type_error(json_kind(value), "int32", struct, stack))
            if isinstance(value, float) or not (-(2**31) <= value < 2**31):
                raise _Fatal(self.type_error(f"number {_number_text(value)}", "int32", struct, stack))
            return
        if kind == _TIME:
            if not isinstance(value, str):
                raise _Fatal(self.type_error(json_kind(value), "string", struct, stack))
            if not _RFC3339_RE.match(value):
                raise _Fatal(f'parsing time "{value}" as "{_RFC3339_LAYOUT}": cannot parse "{value}" as "2006"')
            return


def valid_quantity(text: str) -> bool:
    """Whether ``text`` parses as a resource.Quantity (the decode-time check)."""
    m = _QUANTITY_RE.match(text)
    if not m:
        return False
    return bool(_QUANTITY_NUMBER_RE.match(m.group(1)) and _QUANTITY_SUFFIX_RE.match(m.group(2)))


def check_structure(obj: dict, root: Node, canonicalize: bool = False, prune: bool = False) -> Structure:
    """Decode-check ``obj`` against the kind schema ``root`` (from ``schema.for_kind``).

    ``apiVersion`` and ``kind`` are always allowed at the top level. Unknown fields are
    listed in document order as ``unknown field "spec.containers[0].bar"``; type errors as
    Go's ``json: cannot unmarshal ...`` messages. When a custom unmarshaller fails (quantity,
    int-or-string, time) decoding stops there and that error is the only type error.
    With ``canonicalize``, a well-typed ``obj`` gets every quantity rewritten in place in
    its canonical form, as a decode/encode round trip through Go does, and with ``prune``
    its unknown fields are dropped (Go's typed decode has nowhere to keep them).
    """
    shape = _root_shape(root)
    walker = _Walker()
    if shape.kind != _STRUCT:
        try:
            walker.walk(obj, shape, "", "", [])
        except _Fatal as e:
            return Structure([str(e)], [])
        return Structure(walker.saved, walker.unknown)
    if not isinstance(obj, dict):
        return Structure([walker.type_error(json_kind(obj), shape.go, "", [])], [])
    try:
        fields = shape.fields
        for key, sub in obj.items():
            child = fields.get(key)
            if child is None:
                if key not in ("apiVersion", "kind"):
                    walker.unknown.append(f'unknown field "{key}"')
                    walker.unknown_refs.append((obj, key))
                continue
            if sub is not None:
                walker.walk(sub, child, key, shape.struct, [key])
    except _Fatal as e:
        return Structure([str(e)], walker.unknown)
    if canonicalize and not walker.saved:
        from mockkube.machinery.quantity import canonicalize as canon

        for container, key, zero in reversed(walker.nulls):
            if zero is _MISSING_FIELD:
                container.pop(key, None)  # a null field decodes to its zero value: omitted again
            else:
                container[key] = zero() if callable(zero) else zero

        for container, key in walker.quantities:
            container[key] = canon(container[key])
        for container, key in walker.byte_refs:  # []byte encodes back as Go's StdEncoding: no line breaks
            v = container[key]
            if isinstance(v, str):
                container[key] = gobase64.canonical(v)
            elif isinstance(v, list):  # the bytes of a JSON array encode back as base64
                container[key] = base64.b64encode(bytes(el or 0 for el in v)).decode("ascii")
    if prune and not walker.saved:
        for container, key in walker.unknown_refs:
            container.pop(key, None)
    return Structure(walker.saved, walker.unknown)


def _is_strict(message: str) -> bool:
    return message.startswith(("unknown field ", "duplicate field "))


def decode_error(kind: str, version: str, messages: list[str]) -> APIError:
    """The 400 BadRequest of apiserver's ``transformDecodeError``.

    Pass ``Structure.unknown_fields`` (strict mode) or ``Structure.type_errors``; strict
    findings are all listed, of type errors only the first is (Go's decoder keeps the first).
    """
    if messages and all(_is_strict(m) for m in messages):
        cause = "strict decoding error: " + ", ".join(messages)
    else:
        cause = next((m for m in messages if not _is_strict(m)), messages[0] if messages else "")
    return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {cause}')


def unknown_field_warnings(unknown: list[str]) -> list[str]:
    """The ``Warning`` header texts for ``fieldValidation=Warn``: one per finding, verbatim
    (apiserver's addStrictDecodingWarnings); the HTTP layer adds the ``299 - "..."`` framing."""
    return list(unknown)
