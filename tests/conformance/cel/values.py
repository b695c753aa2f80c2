"""Backend-neutral CEL values and types for the conformance runner.

Expected results (cel.expr.Value messages) and every backend's results are converted to
these, then compared exactly: int, uint and double are different types, and so are
maps with keys 1 and 1u.

- null: None; bool, int (int64), UInt, float (double), str, bytes
- list: list; map: `Map` (pairs, so that 1, 1u and true stay distinct keys)
- `TypeValue` (``type(x)``), `Timestamp`, `Duration`
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .textproto import Ident, Message


class UInt(int):
    def __repr__(self) -> str:
        return f"{int(self)}u"


@dataclass(frozen=True)
class TypeValue:
    name: str


@dataclass(frozen=True)
class Timestamp:
    seconds: int
    nanos: int = 0


@dataclass(frozen=True)
class Duration:
    seconds: int
    nanos: int = 0


class Map:
    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[Any, Any]]) -> None:
        self.pairs = pairs

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.pairs) + "}"


class ProtoRequired(Exception):
    """The value or type needs protobuf message types the runner does not model."""


class Unsupported(Exception):
    """The test uses a feature of the format the runner does not model (unknowns ...)."""


_WKT_TIME = {
    "type.googleapis.com/google.protobuf.Timestamp": Timestamp,
    "type.googleapis.com/google.protobuf.Duration": Duration,
}


def from_value(v: Message) -> Any:
    """A cel.expr.Value message as a neutral value."""
    for field, conv in _SCALARS.items():
        if v.has(field):
            return conv(v.get(field))
    if v.has("list_value"):
        return [from_value(x) for x in v.get("list_value").all("values")]
    if v.has("map_value"):
        return Map([(from_value(e.get("key")), from_value(e.get("value"))) for e in v.get("map_value").all("entries")])
    if v.has("type_value"):
        return TypeValue(v.str("type_value"))
    if v.has("object_value"):
        any_ = v.get("object_value")
        for name, body in any_.fields.items():
            url = name.strip("[]")
            if url in _WKT_TIME:
                msg = body[-1]
                return _WKT_TIME[url](int(msg.get("seconds", 0)), int(msg.get("nanos", 0)))
            raise ProtoRequired(f"object_value {url.rsplit('/', 1)[-1]}")
        raise ProtoRequired("object_value")
    if v.has("enum_value"):
        raise ProtoRequired("enum_value")
    raise Unsupported(f"empty or unknown Value {sorted(v.fields)}")


_SCALARS = {
    "null_value": lambda x: None,
    "bool_value": lambda x: x == "true" if isinstance(x, Ident) else bool(x),
    "int64_value": int,
    "uint64_value": lambda x: UInt(int(x)),
    "double_value": float,
    "string_value": lambda x: x.decode("utf-8"),
    "bytes_value": bytes,
}


def equal(a: Any, b: Any) -> bool:
    """Exact equality: same CEL type and value (NaN equals NaN; lists in order; maps as sets)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Map):
        if len(a.pairs) != len(b.pairs):
            return False
        return all(any(equal(k, k2) and equal(v, v2) for k2, v2 in b.pairs) for k, v in a.pairs)
    return a == b


def same_but_type(a: Any, b: Any) -> bool:
    """Numerically equal scalars of different CEL types (1 vs 1u vs 1.0)."""
    num = (int, UInt, float)
    return (
        type(a) is not type(b)
        and type(a) in num
        and type(b) in num
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def show(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) + " (double)"
    if isinstance(v, UInt):
        return f"{int(v)}u"
    if isinstance(v, int):
        return f"{v} (int)"
    return repr(v)


# ---------------------------------------------------------------- types

_PRIMITIVES = {
    "BOOL": "bool",
    "INT64": "int",
    "UINT64": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
}
_WELL_KNOWN = {"TIMESTAMP": "google.protobuf.Timestamp", "DURATION": "google.protobuf.Duration"}
_TIME_MESSAGES = ("google.protobuf.Timestamp", "google.protobuf.Duration")


def from_type(t: Message) -> Any:
    """A cel.expr.Type message as a nested tuple, the shape mockkube's checker uses:
    ``"int"``, ``("list", T)``, ``("map", K, V)``, ``("type", T)``, ``("abstract", name, *T)``,
    ``"dyn"``, ``"null_type"``, ``"google.protobuf.Timestamp"``..."""
    if t.has("primitive"):
        return _PRIMITIVES[t.get("primitive")]
    if t.has("dyn"):
        return "dyn"
    if t.has("null"):
        return "null_type"
    if t.has("list_type"):
        return ("list", from_type(t.get("list_type").get("elem_type")))
    if t.has("map_type"):
        m = t.get("map_type")
        return ("map", from_type(m.get("key_type")), from_type(m.get("value_type")))
    if t.has("type"):
        inner = t.get("type")
        return ("type", from_type(inner)) if inner.fields else ("type",)
    if t.has("well_known"):
        wk = str(t.get("well_known"))
        if wk in _WELL_KNOWN:
            return _WELL_KNOWN[wk]
        raise ProtoRequired(f"well_known {wk}")
    if t.has("wrapper"):
        raise ProtoRequired(f"wrapper {t.get('wrapper')}")
    if t.has("message_type"):
        name = t.str("message_type")
        if name in _TIME_MESSAGES:
            return name
        raise ProtoRequired(f"message_type {name}")
    if t.has("abstract_type"):
        a = t.get("abstract_type")
        return ("abstract", a.str("name"), *(from_type(p) for p in a.all("parameter_types")))
    if t.has("type_param"):
        return t.str("type_param")
    if t.has("error"):
        return "*error*"
    raise Unsupported(f"type {sorted(t.fields)}")


def spell(t: Any) -> str:
    """cel-go's spelling of a type from `from_type`: ``list(int)``, ``map(string, dyn)``,
    ``optional_type(int)``, ``type(int)``."""
    if isinstance(t, str):
        return t
    tag, *params = t
    if tag == "abstract":
        name, *params = params
        return name + (f"({', '.join(spell(p) for p in params)})" if params else "")
    return tag + (f"({', '.join(spell(p) for p in params)})" if params else "")
