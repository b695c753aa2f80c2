"""The CEL engine: parsing, type checking, cost estimation and evaluation.

API machinery shared by every CEL user (DRA device selectors today). The environment
mirrors k8s.io/dynamic-resource-allocation/cel: one variable `device` of type
kubernetes.DRADevice {driver: string, attributes: map(string, map(string, dyn)),
capacity: map(string, map(string, Quantity)), allowMultipleAllocations: bool}, the
Kubernetes quantity/semver/strings/lists libraries, the standard macros and cel.bind.
Expressions are parsed and checked once (cached by text) and compiled to Python closures,
so evaluating one against a device costs about a microsecond.

Public API:
- `compile_expression(expr) -> CompiledExpression` (raises CELError with cel-go wording)
- `CompiledExpression.matches(env) -> bool` (raises CELError on runtime errors)
- `mockkube.dra.cel.device_env` builds the `device` value for a ResourceSlice device
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

from mockkube.cel import celtypes, lib, runtimecost, schemavalues
from mockkube.cel.celtypes import CelType, Duration, Timestamp
from mockkube.cel.estimator import dra_sizes
from mockkube.cel.lib import CELRuntimeError, Semver
from mockkube.cel.parser import CELSyntaxError, Node, _qualified, parse
from mockkube.cel.schemavalues import ObjectMap, SchemaList
from mockkube.machinery import goregexp

# Upstream resourceapi.CELSelectorExpressionMaxCost / MaxLength.
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_UINT_MAX = 2**64 - 1


class CELError(Exception):
    """Compile or evaluation error; `.message` is the text upstream would report."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class CelObject(dict):
    """A constructed message (``Object{...}``, ``JSONPatch{...}``): a dict of the fields set,
    with the type name it was built as."""

    def __init__(self, type_name: str) -> None:
        super().__init__()
        self.type_name = type_name


class UInt(int):
    """CEL uint (distinct from int for typing and equality)."""


class optional_type:  # noqa: N801 - the runtime type name cel-go prints
    """A CEL optional: `obj.?f`, `m[?k]`, optional.of/none, ``oldSelf`` under ``optionalOldSelf``."""

    __slots__ = ("value", "present")

    def __init__(self, value: Any = None, present: bool = False) -> None:
        self.value, self.present = value, present

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, optional_type)
            and self.present == other.present
            and (not self.present or cel_equals(self.value, other.value))
        )

    __hash__ = None  # type: ignore[assignment]


_NONE = optional_type()


_ZERO_TIME_NS = -62135596800 * 1_000_000_000  # 0001-01-01T00:00:00Z, Go's zero time.Time


def _opt_non_zero(v: Any) -> optional_type:
    if type(v) is Duration:
        return _NONE if v.ns == 0 else optional_type(v, True)
    if type(v) is Timestamp:
        return _NONE if v.ns == _ZERO_TIME_NS else optional_type(v, True)
    return optional_type(v, True) if v not in (None, "", 0, False, [], {}, b"") else _NONE


Fn = Callable[[dict], Any]
T = Any  # a CEL type: "int", "dyn", ("list", T), ("map", K, V), "device", ...

_DEVICE_FIELDS: dict[str, T] = {
    "driver": "string",
    "attributes": ("map", "string", ("map", "string", "dyn")),
    "capacity": ("map", "string", ("map", "string", "quantity")),
    "allowMultipleAllocations": "bool",
}
_NUMERIC = ("int", "uint", "double")
OPT = "optional_type"
FREE = "*"  # a free type parameter: of optional.none() and [] (until joined; spelled dyn)
TIMESTAMP, DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
_TIME = (Timestamp, Duration)
_KEY_TYPES = (int, UInt, str, bool)
_ORDERED = ("string", "bytes", "bool", TIMESTAMP, DURATION)
_TIME_OPS = {
    ("_+_", TIMESTAMP, DURATION): TIMESTAMP,
    ("_+_", DURATION, TIMESTAMP): TIMESTAMP,
    ("_+_", DURATION, DURATION): DURATION,
    ("_-_", TIMESTAMP, DURATION): TIMESTAMP,
    ("_-_", TIMESTAMP, TIMESTAMP): DURATION,
    ("_-_", DURATION, DURATION): DURATION,
}
# the type names an expression may use as values (``type(x) == int``)
TYPE_NAMES = frozenset(
    ("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type")
    + (TIMESTAMP, DURATION, "optional_type", "net.IP", "net.CIDR")
)


class ObjectType:
    """An object whose fields a schema declares (upstream's DeclType of a custom resource's
    object schema): selecting an undeclared field is a compile error, and an object is not
    a map (no ``[]``, no ``==`` with a map literal). Made once per schema node and compared
    by identity, so compiled rules cache cheaply. ``fields`` is filled after construction
    (a schema may nest); ``name`` is the path cel-go names it by."""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict[str, Any] | None = None) -> None:
        self.name = name
        self.fields: dict[str, Any] = fields if fields is not None else {}

    def __repr__(self) -> str:
        return f"ObjectType({self.name})"


def object_type(decl: ObjectType) -> T:
    """The CEL type of an object with declared fields."""
    return ("object", decl)


def type_name(t: T) -> str:
    """cel-go's spelling of a type, used in error messages."""
    if isinstance(t, tuple):
        if t[0] == "object":
            return t[1].name
        if t[0] == "list":
            return f"list({type_name(t[1])})"
        if t[0] in ("type", OPT):
            return f"{t[0]}({type_name(t[1])})"
        return f"map({type_name(t[1])}, {type_name(t[2])})"
    return {
        "device": "kubernetes.DRADevice",
        "quantity": "kubernetes.Quantity",
        "semver": "kubernetes.Semver",
        FREE: "dyn",
    }.get(t, t)


def runtime_type(v: Any) -> str:
    tv = type(v)
    if tv is bool:
        return "bool"
    if tv is UInt:
        return "uint"
    if tv is int:
        return "int"
    if tv is float:
        return "double"
    if tv is str:
        return "string"
    if tv is bytes:
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if tv is Semver:
        return "semver"
    if tv is Timestamp:
        return TIMESTAMP
    if tv is Duration:
        return DURATION
    if tv is CelType:
        return "type"
    if isinstance(v, lib.quantity_class()):
        return "quantity"
    return tv.__name__


def type_of(v: Any) -> CelType:
    """``type(v)``: the type value of a runtime value, spelled as cel-go spells it."""
    return CelType(type_name(runtime_type(v)))


def _kind(t: T) -> str:
    return t[0] if isinstance(t, tuple) else t


def _assignable(param: T, actual: T) -> bool:
    if param == "dyn" or actual == "dyn" or param == actual or FREE in (param, actual):
        return True
    if isinstance(param, str) and param in ("list", "map", OPT):
        return _kind(actual) == param
    if param == OPT and actual == OPT:
        return True
    if isinstance(param, tuple) and isinstance(actual, tuple) and param[0] == actual[0]:
        if param[0] == "type":
            return True
        return all(_assignable(p, a) for p, a in zip(param[1:], actual[1:]))
    return False


def _merge(a: T, b: T) -> T | None:
    if a == b:
        return a
    if a == FREE:
        return b
    if b == FREE:
        return a
    if a == "dyn" or b == "dyn":
        return "dyn"
    if (a == OPT and _kind(b) == OPT) or (b == OPT and _kind(a) == OPT):  # an unparametrized optional
        return OPT
    if a == "null_type" and _kind(b) == OPT:  # legacy nullable: null joins an optional
        return b
    if b == "null_type" and _kind(a) == OPT:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and len(a) == len(b):
        parts = [_merge(x, y) for x, y in zip(a[1:], b[1:])]
        if any(p is None for p in parts):
            return None
        return (a[0], *parts)
    return None


def _null_comparable(a: T, b: T) -> bool:
    """cel-go's checker: null is assignable to null, optionals and message-like types
    (timestamps, durations, objects), not to primitives, lists or maps."""
    return a == "null_type" and (
        b == "null_type" or _kind(b) == OPT or b in (TIMESTAMP, DURATION) or _kind(b) not in _NOT_NULLABLE
    )


_NOT_NULLABLE = frozenset(("int", "uint", "double", "bool", "string", "bytes", "list", "map", "type"))


def _elem(t: T) -> T:
    """The element type of a list type (dyn for the free one of ``[]``)."""
    return "dyn" if t[1] == FREE else t[1]


def _opt_param(t: T) -> T:
    """The value type of an optional type (dyn when unknown or free)."""
    if isinstance(t, tuple) and t[0] == OPT and t[1] != FREE:
        return t[1]
    return "dyn"


def _field_type(t: T) -> T:
    """The type a field selection or index on a value of type t yields."""
    return t[2] if _kind(t) == "map" else "dyn"


def _rt_matches(param: T, value: Any) -> bool:
    if param == "dyn":
        return True
    return runtime_type(value) == _kind(param)


# ---------------------------------------------------------------- runtime helpers


def _check_int(v: int) -> int:
    if v < _INT_MIN or v > _INT_MAX:
        raise CELRuntimeError("integer overflow")
    return v


def _check_uint(v: int) -> UInt:
    if v < 0 or v > _UINT_MAX:
        raise CELRuntimeError("unsigned integer overflow")
    return UInt(v)


def cel_equals(a: Any, b: Any) -> bool:
    """Heterogeneous equality: numbers compare by value, other types must match."""
    ta, tb = type(a), type(b)
    if ta is tb or (isinstance(a, dict) and isinstance(b, dict)):
        if ta is list:
            return len(a) == len(b) and all(cel_equals(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return len(a) == len(b) and all(k in b and cel_equals(v, b[k]) for k, v in a.items())
        return a == b  # a custom resource's lists (schemavalues) compare as their list-type says
    if isinstance(a, list) and isinstance(b, list):
        # a custom resource's list beside another list: the left operand's equality decides, as
        # cel-go's lhs.Equal(rhs)
        return a.cel_equal(b, cel_equals) if isinstance(a, SchemaList) else SchemaList.cel_equal(a, b, cel_equals)
    if ta in (int, UInt, float) and tb in (int, UInt, float):
        if ta is float and tb is not float:
            return a == float(b)
        if tb is float and ta is not float:
            return float(a) == b
        return a == b
    return False


schemavalues.use_equality(cel_equals)


def _compare(a: Any, b: Any) -> int:
    ta, tb = type(a), type(b)
    if ta is tb and ta in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
        return (a > b) - (a < b)
    if ta in (int, UInt, float) and tb in (int, UInt, float):
        # cel-go compares an integer with a double as doubles (lossy at the int64 limits)
        if ta is float and tb is not float:
            b = float(b)
        elif tb is float and ta is not float:
            a = float(a)
        return (a > b) - (a < b)
    raise CELRuntimeError(f"no such overload: {runtime_type(a)} < {runtime_type(b)}")


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is not tb:
        if isinstance(a, list) and isinstance(b, list):  # a custom resource's list on either side
            return a.cel_add(b, cel_equals) if isinstance(a, SchemaList) else a + b
        if ta in _TIME and tb in _TIME:
            return celtypes.add(a, b)
        raise CELRuntimeError(f"no such overload: {runtime_type(a)} + {runtime_type(b)}")
    if ta is int:
        return _check_int(a + b)
    if ta is UInt:
        return _check_uint(a + b)
    if ta in (float, str, bytes, list):
        return a + b
    if ta is Duration:
        return celtypes.add(a, b)
    if isinstance(a, SchemaList):
        return a.cel_add(b, cel_equals)
    raise CELRuntimeError(f"no such overload: {runtime_type(a)} + {runtime_type(b)}")


def _arith(op: str) -> Callable[[Any, Any], Any]:
    def fn(a: Any, b: Any) -> Any:
        ta, tb = type(a), type(b)
        if op == "-" and ta in _TIME and tb in _TIME:
            r = celtypes.sub(a, b)
            if r is not NotImplemented:
                return r
        if ta is not tb or ta not in (int, UInt, float) or (op == "%" and ta is float):
            raise CELRuntimeError(f"no such overload: {runtime_type(a)} {op} {runtime_type(b)}")
        if op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            if ta is float:
                return a / b if b else (math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan)
            if b == 0:
                raise CELRuntimeError("division by zero")
            r = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        else:
            if b == 0:
                raise CELRuntimeError("modulus by zero")
            r = abs(a) % abs(b) * (1 if a >= 0 else -1)
        if ta is int:
            return _check_int(r)
        if ta is UInt:
            return _check_uint(r)
        return r

    return fn


def _index(container: Any, key: Any) -> Any:
    if type(container) is optional_type:  # optional chaining: opt[k] is optional
        if not container.present:
            return _NONE
        return _opt_index(container.value, key)
    if isinstance(container, list):
        if type(key) not in (int, UInt) and not (type(key) is float and key.is_integer()):
            raise CELRuntimeError(f"no such overload: list[{runtime_type(key)}]")
        i = int(key)
        if i < 0 or i >= len(container):
            if isinstance(container, SchemaList):  # k8s.io/apiserver's unstructuredList
                raise CELRuntimeError(f"index out of bounds: {i}")
            raise CELRuntimeError(f"index out of range: {i}")
        return container[i]
    if isinstance(container, dict):
        try:
            return container[key]
        except (KeyError, TypeError):
            raise CELRuntimeError(f"no such key: {key}") from None
    raise CELRuntimeError(f"no such overload: {runtime_type(container)}[{runtime_type(key)}]")


def _opt_index(container: Any, key: Any) -> optional_type:
    """`c[?k]` / `c.?k`: optional.of(c[k]) when present, else optional.none()."""
    if type(container) is optional_type:
        if not container.present:
            return _NONE
        container = container.value
    if isinstance(container, dict):
        try:
            return optional_type(container[key], True) if dict.__contains__(container, key) else _NONE
        except TypeError:
            return _NONE
    if isinstance(container, list):
        if type(key) in (int, UInt) and 0 <= key < len(container):
            return optional_type(container[key], True)
        return _NONE
    raise CELRuntimeError(f"no such overload: {runtime_type(container)}[?{runtime_type(key)}]")


def _select(obj: Any, name: str) -> Any:
    if type(obj) is optional_type:
        if not obj.present:
            return _NONE
        return _opt_index(obj.value, name)
    if isinstance(obj, dict):
        try:
            return obj[name]
        except KeyError:
            raise CELRuntimeError(f"no such key: {name}") from None
    if hasattr(obj, "cel_select"):  # library objects with fields (authorizer.requestResource)
        try:
            return obj.cel_select(name)
        except KeyError:
            raise CELRuntimeError(f"no such key: {name}") from None
    raise CELRuntimeError(f"no such overload: {runtime_type(obj)}.{name}")


def _contains(container: Any, elem: Any) -> bool:
    if isinstance(container, list):
        return any(cel_equals(elem, x) for x in container)
    if isinstance(container, dict):
        try:
            return dict.__contains__(container, elem)
        except TypeError:
            return False
    raise CELRuntimeError(f"no such overload: {runtime_type(elem)} in {runtime_type(container)}")


class DefaultEmptyMap(dict):
    """The outer attributes/capacity map: unknown domains read as an empty map (upstream)."""

    def __missing__(self, key: Any) -> dict:
        return {}


# ---------------------------------------------------------------- library functions


def _to_int(v: Any) -> int:
    if type(v) is Timestamp:
        return celtypes.timestamp_seconds(v)
    if type(v) is Duration:
        return v.ns
    if type(v) is str:
        try:
            return _check_int(int(v, 10))
        except ValueError:
            raise CELRuntimeError(f"cannot convert '{v}' to int") from None
    if type(v) is float:
        # cel-go: strictly inside (MinInt64, MaxInt64) as doubles, so -2^63 itself overflows
        if math.isnan(v) or not (-9.223372036854775808e18 < v < 9.223372036854775808e18):
            raise CELRuntimeError("integer overflow")
        return int(v)
    return _check_int(int(v))


def _to_uint(v: Any) -> UInt:
    if type(v) is str:
        try:
            n = int(v, 10)
        except ValueError:
            raise CELRuntimeError(f'strconv.ParseUint: parsing "{v}": invalid syntax') from None
        return _check_uint(n)
    if type(v) is float:
        if math.isnan(v) or not (-1.0 < v < 1.8446744073709551616e19):
            raise CELRuntimeError("unsigned integer overflow")
        return UInt(int(v))
    return _check_uint(int(v))


_BOOL_STRINGS = {
    "1": True,
    "t": True,
    "T": True,
    "TRUE": True,
    "true": True,
    "True": True,
    "0": False,
    "f": False,
    "F": False,
    "FALSE": False,
    "false": False,
    "False": False,
}


def _to_bool(v: Any) -> bool:
    """Go's strconv.ParseBool, as cel-go's bool(string)."""
    if type(v) is bool:
        return v
    try:
        return _BOOL_STRINGS[v]
    except KeyError:
        raise CELRuntimeError(f'strconv.ParseBool: parsing "{v}": invalid syntax') from None


def _to_string(v: Any) -> str:
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CELRuntimeError("invalid UTF-8 in bytes, cannot convert to string") from None
    if type(v) is float:
        return repr(v) if not v.is_integer() else f"{int(v)}"
    if type(v) is Timestamp:
        return celtypes.timestamp_string(v)
    if type(v) is Duration:
        return celtypes.duration_string(v)
    if isinstance(v, lib.quantity_class()):
        return v.canonical()
    return str(v)


def _q_int(q: Any) -> int:
    d = _q_fraction(q)
    if d.denominator != 1 or not _INT_MIN <= d.numerator <= _INT_MAX:  # Quantity.AsInt64 fails
        raise CELRuntimeError("cannot convert value to integer")
    return d.numerator


def _q_is_int(q: Any) -> bool:
    d = _q_fraction(q)
    return d.denominator == 1 and _INT_MIN <= d.numerator <= _INT_MAX


def _q_fraction(q: Any) -> Any:
    from fractions import Fraction

    m, e = q.as_exact()
    return Fraction(m) * (Fraction(10) ** e)


def _q_add(q: Any, other: Any) -> Any:
    if type(other) is int:
        other = lib.quantity_parse(str(other))
    return q + other


def _q_sub(q: Any, other: Any) -> Any:
    if type(other) is int:
        other = lib.quantity_parse(str(other))
    return q - other


def _list_sorted(xs: list) -> bool:
    return all(_compare(xs[i], xs[i + 1]) <= 0 for i in range(len(xs) - 1))


_COMPARABLE = ("int", "uint", "double", "bool", DURATION, TIMESTAMP, "string", "bytes")


def _list_min(xs: list) -> Any:
    if not xs:
        raise CELRuntimeError("min called on empty list")
    best = xs[0]
    for x in xs[1:]:
        if _compare(x, best) < 0:
            best = x
    return best


def _list_max(xs: list) -> Any:
    if not xs:
        raise CELRuntimeError("max called on empty list")
    best = xs[0]
    for x in xs[1:]:
        if _compare(x, best) > 0:
            best = x
    return best


def _summer(t: T) -> Callable[[list], Any]:
    """sum() of a list(t): from t's zero; a list typed only at run time starts from its
    first element's type, as the overload cel-go dispatches to for it would."""
    zero = {"int": 0, "uint": UInt(0), "double": 0.0, DURATION: Duration(0)}[t]
    starts = {int: 0, UInt: UInt(0), float: 0.0, Duration: Duration(0)}

    def total(xs: list) -> Any:
        acc: Any = starts.get(type(xs[0]), zero) if xs else zero
        for x in xs:
            acc = _add(acc, x)
        return acc

    return total


def regexp(pattern: str) -> goregexp.Regexp:
    """``pattern`` as Go's regexp.Compile reads it; its error is the evaluation's error."""
    try:
        return goregexp.compile(pattern)
    except goregexp.RegexpError as exc:
        raise CELRuntimeError(str(exc)) from None


def _matches(s: str, pattern: str) -> bool:
    return regexp(pattern).search(s)


# functions whose constant pattern cel-go compiles when the program is made (OptimizeRegex,
# which every Kubernetes environment sets): a bad constant fails there, not at evaluation
_REGEX_FUNCTIONS = frozenset({"matches", "find", "findAll"})


class _ProgramError(Exception):
    """cel-go's env.Program() failing: Kubernetes says "program instantiation failed: ..."."""


def _precompile_regex(n: Node) -> None:
    arg = n.args[0] if n.target is not None else (n.args[1] if len(n.args) > 1 else None)
    if arg is not None and arg.kind == "lit" and isinstance(arg.value, str):
        try:
            goregexp.compile(arg.value)
        except goregexp.RegexpError as exc:
            raise _ProgramError(str(exc)) from None


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start < 0 or end > len(s) or start > end:
        raise CELRuntimeError(f"index out of range: {start if start < 0 or start > len(s) else end}")
    return s[start:end]


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise CELRuntimeError(f"index out of range: {i}")
    return s[i : i + 1]


LS = ("list", "string")
_NAMESPACES = ("optional", "jsonpatch", "strings", "ip", "lists", "sets")
# the optional library's generic result types: optional_type(T) from its arguments
_OPT_RESULTS: dict[str, Callable[[T, list], T]] = {
    "optional.of": lambda r, a: (OPT, a[0]),
    "optional.ofNonZeroValue": lambda r, a: (OPT, a[0]),
    "optional.none": lambda r, a: (OPT, FREE),
    "value": lambda r, a: _opt_param(r) if _kind(r) == OPT else "dyn",
    "orValue": lambda r, a: (_merge(_opt_param(r), a[0]) or "dyn") if _kind(r) == OPT else "dyn",
    "or": lambda r, a: (_merge(r, a[0]) or "dyn") if _kind(r) == OPT else "dyn",
}
_TWO_VAR_MACROS = ("all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry")
# name -> list of (receiver type or None for global, param types, result type, impl)
_FUNCTIONS: dict[str, list[tuple[T, tuple, T, Callable]]] = {
    "size": [
        (None, ("string",), "int", len),
        (None, ("bytes",), "int", len),
        (None, ("list",), "int", len),
        (None, ("map",), "int", len),
        ("string", (), "int", len),
        ("bytes", (), "int", len),
        ("list", (), "int", len),
        ("map", (), "int", len),
    ],
    "int": [(None, (t,), "int", _to_int) for t in ("int", "uint", "double", "string", TIMESTAMP, DURATION)],
    "uint": [(None, (t,), "uint", _to_uint) for t in ("int", "uint", "double", "string")],
    "double": [(None, (t,), "double", float) for t in ("int", "uint", "double", "string")],
    "string": [
        (None, (t,), "string", _to_string)
        for t in ("int", "uint", "double", "string", "bytes", "bool", TIMESTAMP, DURATION)
    ],
    "timestamp": [
        (None, ("string",), TIMESTAMP, celtypes.parse_timestamp),
        (None, ("int",), TIMESTAMP, celtypes.timestamp_from_seconds),
        (None, (TIMESTAMP,), TIMESTAMP, lambda t: t),
    ],
    "duration": [
        (None, ("string",), DURATION, celtypes.parse_duration),
        (None, (DURATION,), DURATION, lambda d: d),
    ],
    "bool": [(None, ("bool",), "bool", _to_bool), (None, ("string",), "bool", _to_bool)],
    "bytes": [(None, ("string",), "bytes", lambda s: s.encode()), (None, ("bytes",), "bytes", bytes)],
    "dyn": [(None, ("dyn",), "dyn", lambda v: v)],
    "contains": [("string", ("string",), "bool", lambda s, x: x in s)],
    "startsWith": [("string", ("string",), "bool", lambda s, x: s.startswith(x))],
    "endsWith": [("string", ("string",), "bool", lambda s, x: s.endswith(x))],
    "matches": [("string", ("string",), "bool", _matches), (None, ("string", "string"), "bool", _matches)],
    "lowerAscii": [("string", (), "string", lambda s: s.lower())],
    "upperAscii": [("string", (), "string", lambda s: s.upper())],
    "trim": [("string", (), "string", lambda s: s.strip())],
    "replace": [("string", ("string", "string"), "string", lambda s, a, b: s.replace(a, b))],
    "split": [("string", ("string",), LS, lambda s, sep: s.split(sep) if sep else list(s))],
    "substring": [("string", ("int",), "string", _substring), ("string", ("int", "int"), "string", _substring)],
    "charAt": [("string", ("int",), "string", _char_at)],
    "indexOf": [
        ("string", ("string",), "int", lambda s, x: s.find(x)),
        ("list", ("dyn",), "int", lambda xs, v: next((i for i, x in enumerate(xs) if cel_equals(x, v)), -1)),
    ],
    "lastIndexOf": [("string", ("string",), "int", lambda s, x: s.rfind(x))],
    "join": [(LS, (), "string", lambda xs: "".join(xs)), (LS, ("string",), "string", lambda xs, sep: sep.join(xs))],
    # Kubernetes' lists library: templated over its comparable and summable types
    "isSorted": [(("list", t), (), "bool", _list_sorted) for t in _COMPARABLE],
    "min": [(("list", t), (), t, _list_min) for t in _COMPARABLE],
    "max": [(("list", t), (), t, _list_max) for t in _COMPARABLE],
    "sum": [(("list", t), (), t, _summer(t)) for t in ("int", "uint", "double", DURATION)],
    "quantity": [(None, ("string",), "quantity", lib.quantity_parse)],
    "isQuantity": [(None, ("string",), "bool", lib.is_quantity)],
    "semver": [(None, ("string",), "semver", lib.semver_parse), (None, ("string", "bool"), "semver", lib.semver_parse)],
    "isSemver": [(None, ("string",), "bool", lib.is_semver), (None, ("string", "bool"), "bool", lib.is_semver)],
    "sign": [("quantity", (), "int", lambda q: (_q_fraction(q) > 0) - (_q_fraction(q) < 0))],
    "isInteger": [("quantity", (), "bool", _q_is_int)],
    "asInteger": [("quantity", (), "int", _q_int)],
    "asApproximateFloat": [("quantity", (), "double", lambda q: float(_q_fraction(q)))],
    "add": [("quantity", ("quantity",), "quantity", _q_add), ("quantity", ("int",), "quantity", _q_add)],
    "sub": [("quantity", ("quantity",), "quantity", _q_sub), ("quantity", ("int",), "quantity", _q_sub)],
    "compareTo": [
        ("quantity", ("quantity",), "int", lib.quantity_cmp),
        ("semver", ("semver",), "int", lib.quantity_cmp),
    ],
    "isGreaterThan": [
        ("quantity", ("quantity",), "bool", lambda a, b: a.cmp(b) > 0),
        ("semver", ("semver",), "bool", lambda a, b: a > b),
    ],
    "isLessThan": [
        ("quantity", ("quantity",), "bool", lambda a, b: a.cmp(b) < 0),
        ("semver", ("semver",), "bool", lambda a, b: a < b),
    ],
    "or": [("optional_type", ("optional_type",), "optional_type", lambda o, p: o if o.present else p)],
    "optional.of": [(None, ("dyn",), "optional_type", lambda v: optional_type(v, True))],
    "optional.ofNonZeroValue": [(None, ("dyn",), "optional_type", _opt_non_zero)],
    "optional.none": [(None, (), "optional_type", lambda: _NONE)],
    # mutating admission policies: a map key as a JSON Pointer token
    "jsonpatch.escapeKey": [(None, ("string",), "string", lambda k: k.replace("~", "~0").replace("/", "~1"))],
    **{
        name: [(TIMESTAMP, (), "int", fn), (TIMESTAMP, ("string",), "int", fn)]
        + ([(DURATION, (), "int", celtypes.DURATION_ACCESSORS[name])] if name in celtypes.DURATION_ACCESSORS else [])
        for name, fn in celtypes.TIMESTAMP_ACCESSORS.items()
    },
    "major": [("semver", (), "int", lambda v: v.major)],
    "minor": [("semver", (), "int", lambda v: v.minor)],
    "patch": [("semver", (), "int", lambda v: v.patch)],
}


# ---------------------------------------------------------------- checker + compiler


class _CheckError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def _no_overload(name: str, node: Node, types: list[T], receiver: T | None = None) -> _CheckError:
    # cel-go's FormatCheckedType spells the null type "null" here (type(null) is null_type)
    args = ", ".join("null" if t == "null_type" else type_name(t) for t in types)
    applied = f"{type_name(receiver)}.({args})" if receiver is not None else f"({args})"
    return _CheckError(f"found no matching overload for '{name}' applied to '{applied}'", node.pos)


_DRA_DECLARED = frozenset(("device",))


def _prefixes(container: str) -> tuple[str, ...]:
    parts = container.split(".")
    return tuple(".".join(parts[:i]) + "." for i in range(len(parts), 0, -1))


def _typed_at_run_time(*types: T) -> bool:
    """Whether a type holds dyn: here an object whose schema type upstream knows (an
    admission policy's ``object``, a CRD field that preserves unknown fields) is dyn, so the
    homogeneity validator lets it pass rather than refuse what upstream accepts."""
    return any(t == "dyn" or (isinstance(t, tuple) and _typed_at_run_time(*t[1:])) for t in types)


class _Compiler:
    # Kubernetes' environments add cel-go's AST validators (ValidateDurationLiterals,
    # ValidateTimestampLiterals, ValidateRegexLiterals, ValidateHomogeneousAggregateLiterals);
    # cel-spec's conformance tests run without them
    validators = True
    tracked = False  # closures charge cel-go's runtime cost (see _TrackedCompiler)

    def __init__(self, scope: dict[str, T] | None = None, container: str = "") -> None:
        self.format_literals: set[int] = set()  # list/map literals inside a format() call: mixed types allowed
        if scope is None:  # the DRA selector environment
            self.scope: dict[str, T] = {"device": "device"}
            self.declared, self.dotted = _DRA_DECLARED, False
        else:
            self.scope = dict(scope)
            self.declared = frozenset(self.scope)
            self.dotted = any("." in k for k in self.scope)  # variables named like `a.b.c`
        self.container = container
        self.locals: list[str] = []  # comprehension and bind variables in scope, innermost last
        # cel-go's resolution order in container "a.b": a.b.x, a.x, x
        self.prefixes = _prefixes(container) if container else ()
        self.node_types: dict[int, T] = {}  # id(node) -> its checked type, for the cost estimator

    def _resolve(self, name: str, rooted: bool = False) -> str | None:
        """The variable a (possibly dotted) name refers to: a comprehension variable, else the
        first declared one of the container's candidates; None when there is none."""
        if not rooted and name in self.locals:
            return name
        if not rooted:
            for prefix in self.prefixes:
                if prefix + name in self.declared and prefix + name in self.scope:
                    return prefix + name
        if name in self.declared and (rooted or name not in self.locals):
            return name
        return None

    def compile(self, n: Node) -> tuple[T, Fn]:
        t, fn = self._compile(n)
        self.node_types[id(n)] = t
        return t, fn

    def _compile(self, n: Node) -> tuple[T, Fn]:
        k = n.kind
        if k == "lit":
            value = n.value
            if n.type_name == "uint":
                value = _check_uint(value)
            elif n.type_name == "int" and not (_INT_MIN <= value <= _INT_MAX):
                raise _CheckError("integer literal out of range", n.pos)
            return n.type_name, lambda act, v=value: v
        if k == "ident":
            name = self._resolve(n.name, n.rooted) if self.prefixes or n.rooted else n.name
            if name is None or name not in self.scope:
                if n.name in TYPE_NAMES:
                    return self._type_constant(n.name)
                raise _CheckError(f"undeclared reference to '{n.name}' (in container '{self.container}')", n.pos)
            return self.scope[name], lambda act: act[name]
        if k == "select":
            return self._select(n)
        if k == "index":
            return self._index(n)
        if k == "list":
            items = [self.compile(a) for a in n.args]
            if self.validators and id(n) not in self.format_literals:
                self._homogeneous(
                    [
                        (a, _opt_param(t) if i in n.optional_at else t)
                        for i, (a, (t, _)) in enumerate(zip(n.args, items))
                    ]
                )
            if n.optional_at:
                return self._optional_list(n, items)
            elem = self._join_types([t for t, _ in items], n, "list") if items else FREE
            fns = [f for _, f in items]
            return ("list", elem), lambda act: [f(act) for f in fns]
        if k == "map":
            pairs = [(self.compile(a), self.compile(b)) for a, b in n.entries]
            if self.validators and id(n) not in self.format_literals and pairs:
                kt0, vt0 = pairs[0][0][0], pairs[0][1][0]
                vt0 = _opt_param(vt0) if 0 in n.optional_at else vt0
                for i, ((key, val), ((kt, _), (vt, _))) in enumerate(zip(n.entries, pairs)):
                    vt = _opt_param(vt) if i in n.optional_at else vt
                    if kt != kt0 and not _typed_at_run_time(kt0, kt):
                        raise _CheckError(f"expected type '{type_name(kt0)}' but found '{type_name(kt)}'", key.pos)
                    if vt != vt0 and not _typed_at_run_time(vt0, vt):
                        raise _CheckError(f"expected type '{type_name(vt0)}' but found '{type_name(vt)}'", val.pos)
            if n.optional_at:
                return self._optional_map(n, pairs)
            kt = self._join_types([p[0][0] for p in pairs], n, "map")
            vt = self._join_types([p[1][0] for p in pairs], n, "map")
            for (t, _), _v in pairs:
                if t not in ("int", "uint", "string", "bool", "dyn"):
                    raise _CheckError(f"unsupported map key type: {type_name(t)}", n.pos)
            fp = [(a[1], b[1]) for a, b in pairs]

            def build(act: dict) -> dict:
                out: dict = {}
                for kf, vf in fp:
                    key = kf(act)
                    if type(key) not in _KEY_TYPES:
                        raise CELRuntimeError(f"unsupported key type: {runtime_type(key)}")
                    if key in out:
                        raise CELRuntimeError(f"Failed with repeated key: {key}")
                    out[key] = vf(act)
                return out

            return ("map", kt, vt), build
        if k == "message":
            return self._message(n)
        if k == "cond":
            return self._cond(n)
        return self._call(n)

    def _optional_list(self, n: Node, items: list[tuple[T, Fn]]) -> tuple[T, Fn]:
        """``[a, ?b]``: an optional element is added only when it has a value."""
        for i in n.optional_at:
            if _kind(items[i][0]) not in (OPT, "dyn"):
                raise _no_overload("optional element", n.args[i], [items[i][0]])
        types = [t if i not in n.optional_at else _opt_param(t) for i, (t, _) in enumerate(items)]
        elem = self._join_types(types, n, "list")
        parts = [(i in n.optional_at, f) for i, (_, f) in enumerate(items)]

        def build(act: dict) -> list:
            out = []
            for optional, f in parts:
                v = f(act)
                if optional:
                    if type(v) is not optional_type:
                        raise CELRuntimeError(f"no such overload: optional element of type {runtime_type(v)}")
                    if not v.present:
                        continue
                    v = v.value
                out.append(v)
            return out

        return ("list", elem), build

    def _optional_map(self, n: Node, pairs: list) -> tuple[T, Fn]:
        """``{?k: v}``: an optional entry is set only when its value has one."""
        for i in n.optional_at:
            if _kind(pairs[i][1][0]) not in (OPT, "dyn"):
                raise _no_overload("optional entry", n.entries[i][1], [pairs[i][1][0]])
        kt = self._join_types([p[0][0] for p in pairs], n, "map")
        vt = self._join_types(
            [_opt_param(b[0]) if i in n.optional_at else b[0] for i, (_a, b) in enumerate(pairs)], n, "map"
        )
        fp = [(i in n.optional_at, a[1], b[1]) for i, (a, b) in enumerate(pairs)]

        def build(act: dict) -> dict:
            out: dict = {}
            for optional, kf, vf in fp:
                key = kf(act)
                v = vf(act)
                if optional:
                    if type(v) is not optional_type:
                        raise CELRuntimeError(f"no such overload: optional entry of type {runtime_type(v)}")
                    if not v.present:
                        continue
                    v = v.value
                if type(key) not in _KEY_TYPES:
                    raise CELRuntimeError(f"unsupported key type: {runtime_type(key)}")
                if key in out:
                    raise CELRuntimeError(f"Failed with repeated key: {key}")
                out[key] = v
            return out

        return ("map", kt, vt), build

    def _message(self, n: Node) -> tuple[T, Fn]:
        """A message value (Kubernetes' apply configurations ``Object...`` and ``JSONPatch``,
        declared by the environment): a ``CelObject`` of the fields set, typed by its name;
        ``?field: optional`` sets the field only when the optional has a value."""
        if n.name not in self.scope.get("__messages__", ()):
            raise _CheckError(f"undeclared reference to '{n.name}' (in container '')", n.pos)
        fields = []
        seen: set[str] = set()
        for name, v in n.entries:
            optional = name.startswith("?")
            name = name.lstrip("?")
            if name in seen:
                raise _CheckError(f"field '{name}' is set more than once", v.pos)
            seen.add(name)
            fields.append((name, optional, self.compile(v)[1]))
        type_name_ = n.name

        def build(act: dict) -> CelObject:
            out = CelObject(type_name_)
            for name, optional, fn in fields:
                value = fn(act)
                if optional:
                    if not isinstance(value, optional_type):
                        raise CELRuntimeError("no such overload")
                    if not value.present:
                        continue
                    value = value.value
                if value is not None:
                    out[name] = value
            return out

        return type_name_, build

    @staticmethod
    def _homogeneous(elements: list[tuple[Node, T]]) -> None:
        """cel-go's ValidateHomogeneousAggregateLiterals: every element of a list literal of
        the first one's type (dyn only equals dyn)."""
        if not elements:
            return
        first = elements[0][1]
        for node, t in elements[1:]:
            if t != first and not _typed_at_run_time(first, t):
                raise _CheckError(f"expected type '{type_name(first)}' but found '{type_name(t)}'", node.pos)

    def _mark_format_literals(self, nodes: list[Node]) -> None:
        """The list and map literals reached from format()'s arguments through list and map
        literals only (cel-go's hasStringFormatAncestor)."""
        for node in nodes:
            if node.kind == "list":
                self.format_literals.add(id(node))
                self._mark_format_literals(node.args)
            elif node.kind == "map":
                self.format_literals.add(id(node))
                self._mark_format_literals([x for kv in node.entries for x in kv])

    def _validate_literal_argument(self, n: Node) -> None:
        """cel-go's format validators: duration(), timestamp() and matches() with a literal
        first argument are evaluated (compiled) now; a failure is a compile error."""
        arg = n.args[0]
        if arg.kind != "lit":
            return
        name = n.name
        if name == "matches":
            if isinstance(arg.value, str):
                try:
                    goregexp.compile(arg.value)
                except goregexp.RegexpError:
                    raise _CheckError("invalid matches argument", arg.pos) from None
            return
        convert = {
            ("duration", str): celtypes.parse_duration,
            ("timestamp", str): celtypes.parse_timestamp,
            ("timestamp", int): celtypes.timestamp_from_seconds,
        }.get((name, type(arg.value)))
        if convert is None:
            return
        try:
            _guard(convert, arg.value)
        except CELRuntimeError:
            raise _CheckError(f"invalid {name} argument", arg.pos) from None

    def _join_types(self, types: list[T], n: Node, what: str) -> T:
        """cel-go's joinTypes for literal elements: the most general of mutually assignable
        types (a free optional parameter takes the other's, dyn wins), else dyn."""
        if not types:
            return "dyn"
        out = types[0]
        for t in types[1:]:
            out = _merge(out, t)
            if out is None:
                return "dyn"
        return out

    def _type_constant(self, name: str) -> tuple[T, Fn]:
        value = CelType(name)
        return ("type", name), lambda act: value

    def _select(self, n: Node) -> tuple[T, Fn]:
        t = n.target
        if (
            not n.test_only
            and not n.optional
            and (self.dotted or t.kind != "ident" or t.name not in self.scope)
            and t.kind in ("ident", "select")
        ):
            qualified = _qualified(n)
            root = n
            while root.kind == "select":
                root = root.target
            local = not root.rooted and root.name in self.locals
            found = self._resolve(qualified, root.rooted) if qualified and not local else None
            if found is not None:  # a dotted variable name (the longest prefix wins; comprehension variables shadow)
                return self.scope[found], lambda act: act[found]
            if qualified in TYPE_NAMES and qualified.split(".", 1)[0] not in self.scope:
                return self._type_constant(qualified)
        tt, tf = self.compile(n.target)
        name = n.name
        kt = tt[0] if type(tt) is tuple else tt
        if n.optional:
            if kt not in (OPT, "map", "dyn", "object"):
                raise _CheckError(f"type '{type_name(tt)}' does not support field selection", n.pos)
            inner = _opt_param(tt) if kt == OPT else tt
            if _kind(inner) == "object":
                ft = inner[1].fields.get(name)
                if ft is None:
                    raise _CheckError(f"undefined field '{name}'", n.pos)
                return (OPT, ft), lambda act: _opt_index(tf(act), name)
            return (OPT, _field_type(inner)), lambda act: _opt_index(tf(act), name)
        if kt == OPT and not n.test_only:
            return (OPT, _field_type(_opt_param(tt))), lambda act: _select(tf(act), name)
        if kt == OPT:  # has(opt.f): false for none, else has() on the value

            def has_opt(act: dict) -> bool:
                obj = tf(act)
                if type(obj) is optional_type:
                    if not obj.present:
                        return False
                    obj = obj.value
                if isinstance(obj, dict):
                    return dict.__contains__(obj, name)
                raise CELRuntimeError(f"no such overload: has({runtime_type(obj)}.{name})")

            return "bool", has_opt
        if tt == "device":
            if name not in _DEVICE_FIELDS:
                raise _CheckError(f"undefined field '{name}'", n.pos)
            if n.test_only:
                return "bool", lambda act: True
            return _DEVICE_FIELDS[name], lambda act: tf(act)[name]
        if kt == "object":
            ft = tt[1].fields.get(name)
            if ft is None:
                raise _CheckError(f"undefined field '{name}'", n.pos)
            if n.test_only:

                def has_field(act: dict) -> bool:
                    obj = tf(act)
                    if type(obj) is ObjectMap:
                        return obj.has_field(name)
                    return isinstance(obj, dict) and dict.__contains__(obj, name)

                return "bool", has_field
            return ft, lambda act: _select(tf(act), name)
        if kt == "map" or tt == "dyn":
            if kt == "map" and tt[1] not in ("string", "dyn"):
                raise _CheckError(f"type '{type_name(tt)}' does not support field selection", n.pos)
            if n.test_only:

                def has(act: dict) -> bool:
                    obj = tf(act)
                    if type(obj) is ObjectMap:
                        return obj.has_field(name)
                    if isinstance(obj, dict):
                        return dict.__contains__(obj, name)
                    raise CELRuntimeError(f"no such overload: has({runtime_type(obj)}.{name})")

                return "bool", has
            return (tt[2] if kt == "map" else "dyn"), lambda act: _select(tf(act), name)
        raise _CheckError(f"type '{type_name(tt)}' does not support field selection", n.pos)

    def _index(self, n: Node) -> tuple[T, Fn]:
        (tt, tf), (it, ifn) = self.compile(n.target), self.compile(n.args[0])
        if n.optional:
            inner = _opt_param(tt) if _kind(tt) == OPT else tt
            et = _elem(inner) if _kind(inner) == "list" else _field_type(inner)
            return (OPT, et), lambda act: _opt_index(tf(act), ifn(act))
        if _kind(tt) == OPT:
            inner = _opt_param(tt)
            et = _elem(inner) if _kind(inner) == "list" else _field_type(inner)
            return (OPT, et), lambda act: _index(tf(act), ifn(act))
        if _kind(tt) == "list" and it in ("int", "uint", "dyn"):
            rt = _elem(tt)
        elif _kind(tt) == "map" and _assignable(tt[1], it):
            rt = tt[2]
        elif tt == "dyn":
            rt = "dyn"
        else:
            raise _no_overload("_[_]", n, [tt, it])
        return rt, lambda act: _index(tf(act), ifn(act))

    def _cond(self, n: Node) -> tuple[T, Fn]:
        (ct, cf), (at, af), (bt, bf) = (self.compile(a) for a in n.args)
        if ct not in ("bool", "dyn"):
            raise _no_overload("_?_:_", n, [ct, at, bt])
        if at == bt:
            rt = at
        elif _kind(at) == OPT and _kind(bt) == OPT:
            rt = _merge(at, bt) or "dyn"
        elif "dyn" in (at, bt) or "null_type" in (at, bt):
            rt = "dyn"
        elif _assignable(at, bt):
            rt = at
        else:
            raise _no_overload("_?_:_", n, [ct, at, bt])

        def cond(act: dict) -> Any:
            c = cf(act)
            if type(c) is not bool:
                raise CELRuntimeError(f"no such overload: {runtime_type(c)} ? _ : _")
            return af(act) if c else bf(act)

        return rt, cond

    # -- calls

    def _call(self, n: Node) -> tuple[T, Fn]:
        name = n.name
        if name == "format" and self.validators:
            self._mark_format_literals(n.args)
        if n.target is None:
            if name == "has":
                if len(n.args) != 1 or n.args[0].kind != "select":
                    raise _CheckError("invalid argument to has() macro", n.pos)
                sel = n.args[0]
                return self._select(Node("select", sel.pos, name=sel.name, target=sel.target, test_only=True))
            if name in ("_&&_", "_||_"):
                return self._logic(n)
            if name == "type" and len(n.args) == 1 and "type" not in self.scope:
                at, af = self.compile(n.args[0])
                return ("type", at), lambda act: type_of(af(act))
            if name.startswith("_") or name in ("!_", "-_", "@in"):
                return self._operator(n)
        else:
            if (
                name in _TWO_VAR_MACROS
                and len(n.args) >= 3
                and n.args[0].kind == "ident"
                and n.args[1].kind == "ident"
                and (name not in ("all", "exists") or len(n.args) == 3)
            ):
                return self._comprehension2(n)
            if name in ("optMap", "optFlatMap") and len(n.args) == 2 and n.args[0].kind == "ident":
                return self._opt_map(n)
            if (
                name in ("all", "exists", "exists_one", "existsOne", "map", "filter")
                and n.args
                and n.args[0].kind == "ident"
            ):
                return self._comprehension(n)
            if name == "bind" and n.target.kind == "ident" and n.target.name == "cel" and "cel" not in self.scope:
                return self._bind(n)
            if name == "sortBy" and len(n.args) == 2 and n.args[0].kind == "ident":
                return self._sort_by(n)
            if (
                n.target.kind == "ident"
                and n.target.name in _NAMESPACES
                and n.target.name not in self.scope
                and f"{n.target.name}.{name}" in _FUNCTIONS
            ):
                return self._function(Node("call", n.pos, name=f"{n.target.name}.{name}", args=n.args))
        return self._function(n)

    def _sort_by(self, n: Node) -> tuple[T, Fn]:
        """cel-go's sortBy macro: ``xs.sortBy(e, key)`` is
        ``cel.bind(@__sortBy_input__, xs, @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(e, key)))``."""
        if n.target.kind not in ("list", "select", "ident", "call", "index"):
            raise _CheckError(
                "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
                n.target.pos,
            )
        var = "@__sortBy_input__"
        bound = Node("ident", n.target.pos, name=var)
        keys = Node("call", n.pos, name="map", target=bound, args=list(n.args))
        call = Node("call", n.pos, name="@sortByAssociatedKeys", target=bound, args=[keys])
        return self.compile(  # through compile, so a tracked program charges the bind
            Node("call", n.pos, name="bind", target=Node("ident", n.pos, name="cel"), args=[bound, n.target, call])
        )

    def _logic(self, n: Node) -> tuple[T, Fn]:
        (at, af), (bt, bf) = self.compile(n.args[0]), self.compile(n.args[1])
        for t in (at, bt):
            if t not in ("bool", "dyn"):
                raise _no_overload(n.name, n, [at, bt])
        short = n.name == "_||_"  # value that decides the result on its own

        def logic(act: dict) -> bool:
            err: Exception | None = None
            try:
                a = af(act)
                if type(a) is not bool:
                    raise CELRuntimeError(f"no such overload: {runtime_type(a)} {'||' if short else '&&'} _")
                if a is short:
                    return short
            except CELRuntimeError as exc:
                err = exc
            b = bf(act)
            if type(b) is not bool:
                raise CELRuntimeError(f"no such overload: _ {'||' if short else '&&'} {runtime_type(b)}")
            if b is short:
                return short
            if err is not None:
                raise err
            return not short

        return "bool", logic

    def _operator(self, n: Node) -> tuple[T, Fn]:
        compiled = [self.compile(a) for a in n.args]
        types = [t for t, _ in compiled]
        fns = [f for _, f in compiled]
        name = n.name
        display = "@in" if name == "@in" else name
        if name == "!_":
            if types[0] not in ("bool", "dyn"):
                raise _no_overload(display, n, types)
            f0 = fns[0]

            def not_(act: dict) -> bool:
                v = f0(act)
                if type(v) is not bool:
                    raise CELRuntimeError(f"no such overload: !{runtime_type(v)}")
                return not v

            return "bool", not_
        if name == "-_":
            if types[0] not in ("int", "double", "dyn"):
                raise _no_overload(display, n, types)
            f0 = fns[0]

            def neg(act: dict) -> Any:
                v = f0(act)
                if type(v) is int:
                    return _check_int(-v)
                if type(v) is float:
                    return -v
                raise CELRuntimeError(f"no such overload: -{runtime_type(v)}")

            return types[0], neg
        a, b = types
        fa, fb = fns
        dyn = "dyn" in (a, b)
        if name in ("_==_", "_!=_"):
            if not (dyn or _assignable(a, b) or _null_comparable(a, b) or _null_comparable(b, a)):
                raise _no_overload(display, n, types)
            if name == "_==_":
                return "bool", lambda act: cel_equals(fa(act), fb(act))
            return "bool", lambda act: not cel_equals(fa(act), fb(act))
        if name in ("_<_", "_<=_", "_>_", "_>=_"):
            ok = dyn or (a in _NUMERIC and b in _NUMERIC) or (a == b and a in _ORDERED)
            if not ok:
                raise _no_overload(display, n, types)
            test = {"_<_": lambda c: c < 0, "_<=_": lambda c: c <= 0, "_>_": lambda c: c > 0, "_>=_": lambda c: c >= 0}[
                name
            ]
            return "bool", lambda act: test(_compare(fa(act), fb(act)))
        if name == "@in":
            if not (
                b == "dyn"
                or (_kind(b) == "list" and _assignable(b[1], a))
                or (_kind(b) == "map" and _assignable(b[1], a))
            ):
                raise _no_overload(display, n, types)
            return "bool", lambda act: _contains(fb(act), fa(act))
        if (name, a, b) in _TIME_OPS:
            fn = _add if name == "_+_" else _arith("-")
            return _TIME_OPS[(name, a, b)], lambda act: fn(fa(act), fb(act))
        if name == "_+_":
            ok = dyn or (a == b and _kind(a) in ("int", "uint", "double", "string", "bytes", "list"))
            if not ok and not (_kind(a) == "list" == _kind(b)):
                raise _no_overload(display, n, types)
            rt = b if a == "dyn" else a
            if _kind(a) == "list" and a != b:
                rt = ("list", "dyn")
            return rt, lambda act: _add(fa(act), fb(act))
        op = {"_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%"}[name]
        allowed = ("int", "uint") if op == "%" else _NUMERIC
        if not (dyn or (a == b and a in allowed)):
            raise _no_overload(display, n, types)
        fn = _arith(op)
        return (b if a == "dyn" else a), lambda act: fn(fa(act), fb(act))

    def _function(self, n: Node) -> tuple[T, Fn]:
        name = n.name
        overloads = _FUNCTIONS.get(name)
        receiver = None
        rf = None
        if n.target is not None:
            receiver, rf = self.compile(n.target)
        if overloads is None:
            if n.target is None:
                raise _CheckError(f"undeclared reference to '{name}' (in container '')", n.pos)
            raise _no_overload(name, n, [self.compile(a)[0] for a in n.args], receiver)
        compiled = [self.compile(a) for a in n.args]
        types = [t for t, _ in compiled]
        fns = [f for _, f in compiled]
        candidates = []
        for recv_t, params, result, impl in overloads:
            if (recv_t is None) != (n.target is None) or len(params) != len(types):
                continue
            if recv_t is not None and not _assignable(recv_t, receiver):
                continue
            if all(_assignable(p, t) for p, t in zip(params, types)):
                candidates.append((recv_t, params, result, impl))
        if not candidates:
            raise _no_overload(name, n, types, receiver)
        if (
            self.validators
            and n.args
            and (name == "matches" or (name in ("duration", "timestamp") and n.target is None))
        ):
            self._validate_literal_argument(n)
        if name in _REGEX_FUNCTIONS:
            _precompile_regex(n)
        results = {c[2] if not isinstance(c[2], tuple) else type_name(c[2]) for c in candidates}
        rt = candidates[0][2] if len(results) == 1 else "dyn"
        if rt == "dyn" and name in ("min", "max", "sum") and _kind(receiver) == "list":
            rt = _elem(receiver)
        if name in _OPT_RESULTS:
            rt = _OPT_RESULTS[name](receiver, types)
        if len(candidates) == 1 and "dyn" not in types and receiver != "dyn":
            impl = candidates[0][3]
        else:
            impl = self._dispatcher(name, candidates, n.target is not None)
        if rf is not None:
            if not fns:
                return rt, lambda act: _guard(impl, rf(act))
            if len(fns) == 1:
                f0 = fns[0]
                return rt, lambda act: _guard(impl, rf(act), f0(act))
            return rt, lambda act: _guard(impl, rf(act), *[f(act) for f in fns])
        if len(fns) == 1:
            f0 = fns[0]
            return rt, lambda act: _guard(impl, f0(act))
        return rt, lambda act: _guard(impl, *[f(act) for f in fns])

    @staticmethod
    def _dispatcher(name: str, candidates: list, member: bool) -> Callable:
        def dispatch(*values: Any) -> Any:
            recv = values[0] if member else None
            args = values[1:] if member else values
            for recv_t, params, _result, impl in candidates:
                if member and not _rt_matches(recv_t, recv):
                    continue
                if all(_rt_matches(p, v) for p, v in zip(params, args)):
                    return impl(*values)
            raise CELRuntimeError(f"no such overload: {name}")

        return dispatch

    def _comprehension(self, n: Node) -> tuple[T, Fn]:
        macro = "exists_one" if n.name == "existsOne" else n.name
        tt, tf = self.compile(n.target)
        var = n.args[0].name
        if _kind(tt) == "list":
            vt = _elem(tt)
        elif _kind(tt) == "map":
            vt = tt[1]
        elif tt == "dyn":
            vt = "dyn"
        else:
            raise _CheckError(
                f"expression of type '{type_name(tt)}' cannot be the range of a "
                f"comprehension (must be list, map, or dynamic)",
                n.target.pos,
            )
        expected = {"all": 2, "exists": 2, "exists_one": 2, "filter": 2, "map": (2, 3)}[macro]
        if len(n.args) not in (expected if isinstance(expected, tuple) else (expected,)):
            raise _CheckError(f"no matching overload for macro '{macro}'", n.pos)
        saved = self.scope.get(var)
        self.scope[var] = vt
        self.locals.append(var)
        try:
            bodies = [self.compile(a) for a in n.args[1:]]
        finally:
            self.locals.pop()
            if saved is None:
                del self.scope[var]
            else:
                self.scope[var] = saved
        if macro in ("all", "exists", "exists_one", "filter") or (macro == "map" and len(bodies) == 2):
            pt = bodies[0][0]
            if pt not in ("bool", "dyn"):
                raise _no_overload("_&&_" if macro == "all" else "_||_", n.args[1], ["bool", pt])

        step_cost = exit_cost = 0  # charged only by tracked programs
        if self.tracked:
            kind = macro if macro != "map" or len(bodies) == 1 else "map_filter"
            step_cost, exit_cost = _FOLD_STEP[kind]
            bodies = self._fold_extras(n, kind, bodies)

        def items(act: dict) -> Any:
            r = tf(act)
            if isinstance(r, (list, dict)):
                budget = act.get(COST_KEY)
                return r if budget is None or not step_cost else _charged(r, budget, step_cost, exit_cost)
            raise CELRuntimeError(f"expression of type '{runtime_type(r)}' cannot be range of a comprehension")

        pf = bodies[0][1]
        if macro in ("all", "exists"):
            want = macro == "exists"

            def quant(act: dict) -> bool:
                err = None
                scope = dict(act)
                for x in items(act):
                    scope[var] = x
                    try:
                        v = pf(scope)
                        if type(v) is not bool:
                            raise CELRuntimeError(f"no such overload: {runtime_type(v)} as bool")
                        if v is want:
                            return want
                    except CELRuntimeError as exc:
                        err = err or exc
                if err is not None:
                    raise err
                return not want

            return "bool", quant
        if macro == "exists_one":

            def one(act: dict) -> bool:
                scope = dict(act)
                count = 0
                for x in items(act):
                    scope[var] = x
                    if pf(scope) is True:
                        count += 1
                return count == 1

            return "bool", one
        if macro == "filter":

            def filt(act: dict) -> list:
                scope = dict(act)
                out = []
                for x in items(act):
                    scope[var] = x
                    if pf(scope) is True:
                        out.append(x)
                return out

            return ("list", vt), filt
        mt, mf = bodies[-1]

        def mapper(act: dict) -> list:
            scope = dict(act)
            out = []
            for x in items(act):
                scope[var] = x
                if len(bodies) == 2 and pf(scope) is not True:
                    continue
                out.append(mf(scope))
            return out

        return ("list", mt), mapper

    def _comprehension2(self, n: Node) -> tuple[T, Fn]:
        """The two-variable comprehensions (cel-go ext.TwoVarComprehensions): ``all``,
        ``exists``, ``existsOne``, ``transformList``, ``transformMap`` and
        ``transformMapEntry`` with (index, value) over a list or (key, value) over a map."""
        macro = n.name
        tt, tf = self.compile(n.target)
        v1, v2 = n.args[0].name, n.args[1].name
        if v1 == v2:
            raise _CheckError(f"duplicate variable name: {v1}", n.args[1].pos)
        if _kind(tt) == "list":
            t1, t2 = "int", _elem(tt)
        elif _kind(tt) == "map":
            t1, t2 = tt[1], tt[2]
        elif tt == "dyn":
            t1, t2 = "dyn", "dyn"
        else:
            raise _CheckError(
                f"expression of type '{type_name(tt)}' cannot be the range of a "
                f"comprehension (must be list, map, or dynamic)",
                n.target.pos,
            )
        if macro in ("all", "exists", "existsOne") and len(n.args) != 3 or len(n.args) > 4:
            raise _CheckError(f"no matching overload for macro '{macro}'", n.pos)
        saved = {v: self.scope.get(v) for v in (v1, v2)}
        self.scope[v1], self.scope[v2] = t1, t2
        self.locals += [v1, v2]
        try:
            bodies = [self.compile(a) for a in n.args[2:]]
        finally:
            del self.locals[-2:]
            for v, t in saved.items():
                if t is None:
                    del self.scope[v]
                else:
                    self.scope[v] = t
        filtered = len(bodies) == 2
        if macro in ("all", "exists", "existsOne") or filtered:
            pt = bodies[0][0]
            if pt not in ("bool", "dyn"):
                raise _no_overload("_&&_" if macro == "all" else "_||_", n.args[2], ["bool", pt])
        step_cost = exit_cost = 0
        if self.tracked:
            kind = {"existsOne": "exists_one", "transformList": "map"}.get(macro, macro) + (
                "_filter" if filtered else ""
            )
            step_cost, exit_cost = _FOLD_STEP[kind]
            bodies = self._fold_extras(n, kind, bodies)

        def pairs(act: dict) -> Any:
            r = tf(act)
            if isinstance(r, list):
                it: Any = enumerate(r)
            elif isinstance(r, dict):
                it = r.items()
            else:
                raise CELRuntimeError(f"expression of type '{runtime_type(r)}' cannot be range of a comprehension")
            budget = act.get(COST_KEY)
            return it if budget is None or not step_cost else _charged(it, budget, step_cost, exit_cost)

        pf = bodies[0][1]
        if macro in ("all", "exists"):
            want = macro == "exists"

            def quant(act: dict) -> bool:
                err = None
                scope = dict(act)
                for a, b in pairs(act):
                    scope[v1], scope[v2] = a, b
                    try:
                        v = pf(scope)
                        if type(v) is not bool:
                            raise CELRuntimeError(f"no such overload: {runtime_type(v)} as bool")
                        if v is want:
                            return want
                    except CELRuntimeError as exc:
                        err = err or exc
                if err is not None:
                    raise err
                return not want

            return "bool", quant
        if macro == "existsOne":

            def one(act: dict) -> bool:
                scope = dict(act)
                count = 0
                for a, b in pairs(act):
                    scope[v1], scope[v2] = a, b
                    v = pf(scope)
                    if type(v) is not bool:
                        raise CELRuntimeError(f"no such overload: {runtime_type(v)} as bool")
                    count += v
                return count == 1

            return "bool", one
        et, ef = bodies[-1]
        if macro == "transformList":

            def tlist(act: dict) -> list:
                scope = dict(act)
                out = []
                for a, b in pairs(act):
                    scope[v1], scope[v2] = a, b
                    if filtered and pf(scope) is not True:
                        continue
                    out.append(ef(scope))
                return out

            return ("list", et), tlist
        if macro == "transformMap":

            def tmap(act: dict) -> dict:
                scope = dict(act)
                out = {}
                for a, b in pairs(act):
                    scope[v1], scope[v2] = a, b
                    if filtered and pf(scope) is not True:
                        continue
                    out[a] = ef(scope)
                return out

            return ("map", t1, et), tmap
        if _kind(et) not in ("map", "dyn"):
            raise _no_overload("transformMapEntry", n.args[-1], [et])

        def tentry(act: dict) -> dict:
            scope = dict(act)
            out: dict = {}
            for a, b in pairs(act):
                scope[v1], scope[v2] = a, b
                if filtered and pf(scope) is not True:
                    continue
                entry = ef(scope)
                if not isinstance(entry, dict):
                    raise CELRuntimeError(f"no such overload: transformMapEntry({runtime_type(entry)})")
                for k, v in entry.items():
                    if k in out:
                        raise CELRuntimeError(f"insert failed: key {_to_string(k)} already exists")
                    out[k] = v
            return out

        return (et if _kind(et) == "map" else "dyn"), tentry

    def _opt_map(self, n: Node) -> tuple[T, Fn]:
        """``opt.optMap(v, expr)`` / ``opt.optFlatMap(v, optExpr)`` (cel-go's optional
        library): none stays none, a value is bound to ``v`` and mapped."""
        tt, tf = self.compile(n.target)
        if _kind(tt) not in (OPT, "dyn"):
            raise _no_overload(n.name, n, [tt])
        var = n.args[0].name
        saved = self.scope.get(var)
        self.scope[var] = _opt_param(tt)
        self.locals.append(var)
        try:
            bt, bf = self.compile(n.args[1])
        finally:
            self.locals.pop()
            if saved is None:
                del self.scope[var]
            else:
                self.scope[var] = saved
        flat = n.name == "optFlatMap"
        if flat and _kind(bt) not in (OPT, "dyn"):
            raise _no_overload("optFlatMap", n.args[1], [bt])

        def opt_map(act: dict) -> optional_type:
            o = tf(act)
            if type(o) is not optional_type:
                raise CELRuntimeError(f"no such overload: {runtime_type(o)}.{n.name}")
            if not o.present:
                return _NONE
            scope = dict(act)
            scope[var] = o.value
            r = bf(scope)
            if flat:
                if type(r) is not optional_type:
                    raise CELRuntimeError(f"no such overload: optFlatMap({runtime_type(r)})")
                return r
            return optional_type(r, True)

        return (bt if flat else (OPT, bt)), opt_map

    def _bind(self, n: Node) -> tuple[T, Fn]:
        if len(n.args) != 3 or n.args[0].kind != "ident":
            raise _CheckError("cel.bind() variable name must be a simple identifier", n.pos)
        var = n.args[0].name
        it, ifn = self.compile(n.args[1])
        saved = self.scope.get(var)
        self.scope[var] = it
        self.locals.append(var)
        try:
            bt, bf = self.compile(n.args[2])
        finally:
            self.locals.pop()
            if saved is None:
                del self.scope[var]
            else:
                self.scope[var] = saved

        def bind(act: dict) -> Any:
            scope = dict(act)
            scope[var] = ifn(act)
            return bf(scope)

        return bt, bind


# an activation may carry a runtime cost budget: ``{COST_KEY: [remaining]}``; programs
# compiled with ``tracked=True`` (CRD rules, admission policies) charge cel-go's runtime
# costs against it (_TrackedCompiler), others ignore it
COST_KEY = "@cost"


def _charged(items: Any, budget: list, step: int, exit_cost: int = 0) -> Any:
    """Iterate, charging each step; a loop that stops early (``all`` meeting false,
    ``exists`` true) with elements left pays the loop condition once more, as cel-go
    evaluates it before stopping."""
    it = iter(items)
    for x in it:
        budget[0] -= step
        if budget[0] < 0:
            raise CELRuntimeError(_COST_EXCEEDED)
        try:
            yield x
        except GeneratorExit:
            if exit_cost and next(it, _charged) is not _charged:
                budget[0] -= exit_cost
            raise


_COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"


def _charge(act: dict, cost: int) -> None:
    budget = act.get(COST_KEY)
    if budget is not None and cost:
        budget[0] -= cost
        if budget[0] < 0:
            raise CELRuntimeError(_COST_EXCEEDED)


# cel-go's macro expansions, per loop step: (the fixed cost of the condition and step
# around the body, the condition once more when the loop stops early)
_FOLD_STEP = {
    "all": (3, 2),  # @not_strictly_false(@result); @result && p
    "exists": (4, 3),  # @not_strictly_false(!@result); @result || p
    "exists_one": (1, 0),  # p ? @result + 1 : @result
    "map": (12, 0),  # @result + [f]
    "map_filter": (1, 0),  # p ? @result + [f] : @result
    "filter": (1, 0),  # p ? @result + [x] : @result
    "transformMap": (3, 0),  # cel.@mapInsert(@result, k, f)
    "transformMap_filter": (1, 0),
    "transformMapEntry": (2, 0),  # cel.@mapInsert(@result, f)
    "transformMapEntry_filter": (1, 0),
}
# what a true predicate adds to the step, and the accumulator's initial value and the
# result once per loop
_FOLD_TRUE = {
    "exists_one": 1,
    "map_filter": 11,
    "filter": 12,
    "transformMap_filter": 2,
    "transformMapEntry_filter": 1,
}
_FOLD_FINAL = {
    "all": 1,
    "exists": 1,
    "exists_one": 2,
    "map": 11,
    "map_filter": 11,
    "filter": 11,
    "transformMap": 31,
    "transformMap_filter": 31,
    "transformMapEntry": 31,
    "transformMapEntry_filter": 31,
}


def _guard(impl: Callable, *args: Any) -> Any:
    try:
        return impl(*args)
    except CELRuntimeError:
        raise
    except (KeyError, ValueError, TypeError, AttributeError, ArithmeticError) as exc:
        raise CELRuntimeError(str(exc) or type(exc).__name__) from None


# ---------------------------------------------------------------- public API


def _namespaced(types: dict[int, T]) -> Callable[[Node], bool]:
    """Whether a member-style call is a namespaced function (``strings.quote(s)``,
    ``format.named(n)``), as cel-go names it for the cost estimator."""

    def check(n: Node) -> bool:
        t = n.target
        if t is None or t.kind != "ident":
            return False
        tt = types.get(id(t))
        return (tt is None and t.name in _NAMESPACES) or tt == "format_lib"

    return check


def _format_issue(expression: str, message: str, pos: int) -> str:
    before = expression[:pos]
    line = before.count("\n") + 1
    col = pos - (before.rfind("\n") + 1)
    text = expression.split("\n")[line - 1]
    return f"ERROR: <input>:{line}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"


class CompiledExpression:
    """A checked selector expression; `matches` evaluates it against one device env.

    `max_cost` is the estimated worst-case cost; upstream validation rejects a selector
    with max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST ("too complex, exceeds cost limit").
    """

    __slots__ = ("expression", "output_type", "_fn", "_ast", "_types", "_costs", "_sizes")

    def __init__(
        self, expression: str, output_type: T, fn: Fn, ast: Node | None = None, types: Any = None, sizes: Any = None
    ) -> None:
        self.expression = expression
        self.output_type = output_type
        self._fn = fn
        self._ast, self._types, self._sizes = ast, types, sizes
        self._costs: dict = {}

    @property
    def max_cost(self) -> int:
        """The estimated worst-case cost in the environment it was compiled for (a DRA
        selector's: the device's declared sizes)."""
        return self.cost_estimate(self._sizes, key="env")[1]

    def cost_estimate(
        self, sizes: Any = None, key: Any = None, presence_test_cost: int = 0, k8s: bool = True
    ) -> tuple[int, int]:
        """cel-go's static cost estimate (min, max) with Kubernetes' library costs; ``sizes``
        maps a field path to the size bounds its declaration gives (``key`` identifies it
        for the memo). Kubernetes charges nothing for a presence test (``has()``)."""
        memo = (key, presence_test_cost, k8s)
        got = self._costs.get(memo)
        if got is None:
            from mockkube.cel.estimator import estimate_cost

            if self._ast is None:
                return (0, 0)
            got = estimate_cost(self._ast, self._types, sizes, _namespaced(self._types), presence_test_cost, k8s)
            self._costs[memo] = got
        return got

    @property
    def exceeds_cost_limit(self) -> bool:
        return self.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST

    def evaluate(self, activation: dict) -> Any:
        """The value with the given variables bound; CELError on runtime errors."""
        try:
            return self._fn(activation)
        except CELRuntimeError as exc:
            raise CELError(exc.message) from None
        except RecursionError:
            raise CELError("operation cancelled: actual cost limit exceeded") from None

    def matches(self, device_env: dict) -> bool:
        """Evaluate with `device` bound to `device_env`; CELError on runtime errors."""
        try:
            result = self._fn({"device": device_env})
        except CELRuntimeError as exc:
            raise CELError(exc.message) from None
        except RecursionError:
            raise CELError("operation cancelled: actual cost limit exceeded") from None
        if type(result) is not bool:
            raise CELError(f"CEL result of type {runtime_type(result)} could not be converted to bool")
        return result


@lru_cache(maxsize=8192)
def compile_expression(expression: str) -> CompiledExpression:
    """Parse, type-check and compile a selector; CELError carries upstream's message."""
    try:
        ast = parse(expression)
        comp = _Compiler()
        out_type, fn = comp.compile(ast)
    except (CELSyntaxError, _CheckError) as exc:
        raise CELError("compilation failed: " + _format_issue(expression, exc.message, exc.pos)) from None
    except _ProgramError as exc:
        raise CELError(f"program instantiation failed: {exc}") from None
    except RecursionError:
        raise CELError("compilation failed: expression nesting exceeds limit") from None
    if out_type not in ("bool", "dyn"):
        raise CELError(f"must evaluate to bool or the unknown type, not {type_name(out_type)}")
    return CompiledExpression(expression, out_type, fn, ast, comp.node_types, dra_sizes)


class _TrackedCompiler(_Compiler):
    """Closures that charge what cel-go's CostTracker charges as they evaluate, against the
    activation's ``COST_KEY`` budget: 1 per identifier, field selection and index, 10/30/40
    per list/map/message literal, each call by `runtimecost.call_cost` over its argument
    values, and the steps of the comprehensions macros expand to. Only CRD rules compile
    this way; DRA selectors keep the plain closures."""

    tracked = True
    # Kubernetes' environments plan with cel.OptOptimize: list and map literals of constants
    # and type conversions of a constant are computed once (free at run time), and ``in`` a
    # constant list of primitives is a set lookup (free); cel-go's own tests plan without
    optimize = True

    def __init__(self, scope: dict[str, T] | None = None, container: str = "") -> None:
        super().__init__(scope, container)
        self._stash: dict[int, list[list]] = {}  # id(argument node) -> cells its value goes to
        self._final: dict[int, int] = {}  # id(comprehension node) -> its once-per-loop cost

    def _const(self, n: Node) -> bool:
        """Whether cel-go's optimizing planner folds ``n`` to a constant."""
        if not self.optimize:
            return n.kind == "lit"
        k = n.kind
        if k == "lit":
            return True
        if k == "list":
            return not n.optional_at and all(self._const(a) for a in n.args)
        if k == "map":
            return not n.optional_at and all(self._const(a) and self._const(b) for a, b in n.entries)
        if k == "call" and n.target is None and n.name in _CONVERSIONS and len(n.args) == 1:
            return self._const(n.args[0])
        return False

    def _free_call(self, n: Node) -> bool:
        """``x in [constants]`` planned as a set lookup."""
        if not (self.optimize and n.name == "@in" and len(n.args) == 2):
            return False
        rhs = n.args[1]
        return (
            rhs.kind == "list"
            and self._const(rhs)
            and all(a.kind == "lit" and a.type_name not in ("bytes", "null_type") for a in rhs.args)
        )

    def _fold_extras(self, n: Node, kind: str, bodies: list) -> list:
        self._final[id(n)] = _FOLD_FINAL[kind]
        extra = _FOLD_TRUE.get(kind)
        if not extra:
            return bodies
        pt, pf = bodies[0]

        def predicate(act: dict) -> Any:
            v = pf(act)
            if v is True:
                _charge(act, extra)
            return v

        return [(pt, predicate), *bodies[1:]]

    def compile(self, n: Node) -> tuple[T, Fn]:
        if self._const(n):  # computed once: nothing charged, nor below it
            t, fn = super().compile(n)
            stash = self._stash.get(id(n))
            if not stash:
                return t, fn
            sinks = list(stash)

            def const(act: dict, fn: Fn = fn) -> Any:
                r = fn(act)
                for c in sinks:
                    c[0] = r
                return r

            return t, const
        call = None if self._free_call(n) else self._call_name(n)
        cells: list[list] = []
        parts: list[Node] = []
        if call is not None:
            parts = ([n.target] if n.target is not None and not self._namespaced(n) else []) + list(n.args)
            for a in parts:
                cell: list = [None]
                self._stash.setdefault(id(a), []).append(cell)
                cells.append(cell)
        try:
            t, fn = super().compile(n)
        finally:
            for a in parts:
                self._stash[id(a)].pop()
        stash = self._stash.get(id(n))
        sinks = list(stash) if stash else []
        own = self._own_cost(n)
        if id(n) in self._final:
            own += self._final.pop(id(n))
        if call is not None:
            name = call

            def costed_call(act: dict, fn: Fn = fn) -> Any:
                for c in cells:
                    c[0] = None
                try:
                    r = fn(act)
                except CELRuntimeError:  # cel-go charges a call whose result is an error too
                    _charge(act, runtimecost.call_cost(name, [c[0] for c in cells], None))
                    raise
                _charge(act, runtimecost.call_cost(name, [c[0] for c in cells], r))
                for c in sinks:
                    c[0] = r
                return r

            return t, costed_call
        if not own and not sinks:
            return t, fn

        def costed(act: dict, fn: Fn = fn) -> Any:
            try:
                r = fn(act)
            except CELRuntimeError:
                _charge(act, own)
                raise
            budget = act.get(COST_KEY)
            if budget is not None:
                budget[0] -= own
                if budget[0] < 0:
                    raise CELRuntimeError(_COST_EXCEEDED)
            for c in sinks:
                c[0] = r
            return r

        return t, costed

    def _namespaced(self, n: Node) -> bool:
        t = n.target
        if t is None or t.kind != "ident":
            return False
        return (t.name in _NAMESPACES and t.name not in self.scope) or self.scope.get(t.name) == "format_lib"

    def _call_name(self, n: Node) -> str | None:
        """The function a call node charges as (None: not a charged call)."""
        if n.kind != "call":
            return None
        name = n.name
        if name in ("_&&_", "_||_", "has"):
            return None
        if n.target is not None:
            if name in _MACROS and n.args and n.args[0].kind == "ident":
                return None
            if name == "bind" and n.target.kind == "ident" and n.target.name == "cel":
                return None
            if self._namespaced(n):
                return f"{n.target.name}.{name}"
        return name

    def _own_cost(self, n: Node) -> int:
        k = n.kind
        if k == "ident":  # a type name, or ``format`` as the namespace of format.*(), costs nothing
            return (
                1 if (n.name in self.scope or n.name in self.locals) and self.scope.get(n.name) != "format_lib" else 0
            )
        if k in ("select", "index"):
            if n.test_only:
                return 0
            # a qualifier; over something other than a variable, also the attribute itself
            return 1 if n.target is None or n.target.kind in ("ident", "select", "index") else 2
        if k == "list":
            return 10
        if k == "map":
            return 30
        if k == "message":
            return 40
        if k == "call" and n.name == "bind" and n.target is not None:
            return 10  # cel.bind's empty iteration range
        if k == "call" and n.name in ("optMap", "optFlatMap"):
            return 2  # hasValue() and optional.of()/optional.none()
        return 0


_CONVERSIONS = frozenset(("int", "uint", "double", "bool", "string", "bytes", "duration", "timestamp", "dyn", "type"))
_MACROS = frozenset(
    ("all", "exists", "exists_one", "existsOne", "map", "filter", "transformList", "transformMap")
    + ("transformMapEntry", "optMap", "optFlatMap", "sortBy")
)


class _TrackedSpecCompiler(_TrackedCompiler):
    validators = False
    optimize = False


class _SpecCompiler(_Compiler):
    """cel-go as cel-spec's conformance tests run it: no Kubernetes AST validators."""

    validators = False


class _UncheckedCompiler(_SpecCompiler):
    """cel-go with type checking off: every expression is dyn, and what the checker would
    reject (an undeclared variable or function, an overload no argument types fit) fails
    only when evaluated, so ``x || true`` and ``false && 32`` are true and false."""

    def compile(self, n: Node) -> tuple[T, Fn]:
        try:
            _t, fn = super().compile(n)
        except _CheckError as exc:
            message = exc.message

            def fail(act: dict) -> Any:
                raise CELRuntimeError(message)

            return "dyn", fail
        return "dyn", fn


@lru_cache(maxsize=8192)
def compile_with(
    expression: str,
    variables: tuple[tuple[str, T], ...],
    checked: bool = True,
    container: str = "",
    kubernetes: bool = True,
    tracked: bool = False,
) -> CompiledExpression:
    """Parse, type-check and compile an expression over the given (name, type) variables
    (``dyn`` for values whose type comes from an object, as CRD rules' ``self``).
    ``checked=False`` compiles as cel-go does with checking off (the conformance tests'
    ``disable_check``); Kubernetes always checks. ``container`` is cel-go's container: names
    resolve in it first (``x.y`` for ``y`` in container ``x``); Kubernetes sets none.
    ``kubernetes=False`` leaves out the AST validators Kubernetes' environments add (literal
    durations, timestamps and patterns checked, list and map literals of one type)."""
    try:
        ast = parse(expression)
        compiler = _UncheckedCompiler if not checked else (_Compiler if kubernetes else _SpecCompiler)
        if tracked and checked:
            compiler = _TrackedCompiler if kubernetes else _TrackedSpecCompiler
        comp = compiler(dict(variables), container)
        out_type, fn = comp.compile(ast)
    except (CELSyntaxError, _CheckError) as exc:
        raise CELError("compilation failed: " + _format_issue(expression, exc.message, exc.pos)) from None
    except _ProgramError as exc:
        raise CELError(f"program instantiation failed: {exc}") from None
    except RecursionError:
        raise CELError("compilation failed: expression nesting exceeds limit") from None
    return CompiledExpression(expression, out_type, fn, ast, comp.node_types)
