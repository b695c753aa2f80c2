"""Kubernetes protobuf bodies <-> the JSON dicts the server works with.

client-go's typed clients (kubectl create secret|configmap|namespace|deployment, helm's release
Secrets, DeleteOptions on delete) send ``application/vnd.kubernetes.protobuf`` and never fall
back to JSON, so the server must read it. A body is ``k8s\\x00`` followed by a
``runtime.Unknown`` (1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
4 contentType) whose ``raw`` is the object's own message.

The result is what the same Go object would look like after client-go's ``json.Marshal``: the
field table (``proto_types``, generated from upstream) carries the json names and the Go facts
(omitempty, omitzero, pointer, inlined embedding) that decide which zero values appear.
``encode`` is the inverse and mirrors Go's marshaller (ascending field numbers, sorted map
keys, non-pointer scalars always written), so Go's bytes round-trip exactly.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from mockkube.generated.proto_types import KINDS, MESSAGES
from mockkube.machinery import gobase64
from mockkube.machinery.errors import APIError, bad_request

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_TIME = _META + "Time"
_MICROTIME = _META + "MicroTime"
_DURATION = _META + "Duration"
_FIELDSV1 = _META + "FieldsV1"
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INTORSTRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAWEXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"

_VARINT_TYPES = {"bool", "int32", "int64", "uint32", "uint64"}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class _Malformed(Exception):
    """Internal: the bytes are not a valid message; becomes a 400 at the API boundary."""


def message_for(api_version: str, kind: str) -> str:
    """The proto message for an envelope's type; DeleteOptions is registered in every group."""
    msg = KINDS.get((api_version, kind))
    if msg is None and kind == "DeleteOptions":
        msg = _META + "DeleteOptions"
    if msg is None:
        raise bad_request(f'no kind "{kind}" is registered for version "{api_version}" in protobuf request bodies')
    return msg


def decode(body: bytes) -> dict:
    """Decode a full protobuf request body (with the magic) into a JSON-shaped dict."""
    if not body.startswith(MAGIC):
        raise bad_request("protobuf body does not start with the k8s\\x00 prefix")
    try:
        envelope = _fields(body[len(MAGIC) :])
        type_meta = _fields(_last_bytes(envelope, 1))
        api_version = _text(_last_bytes(type_meta, 1))
        kind = _text(_last_bytes(type_meta, 2))
        encoding = _text(_last_bytes(envelope, 3))
        raw = _last_bytes(envelope, 2)
    except (_Malformed, ValueError, IndexError) as e:
        raise bad_request(f"malformed protobuf envelope: {e}") from None
    if encoding:
        raise bad_request(f"unsupported protobuf content encoding {encoding!r}")
    if not kind:
        raise bad_request("Object 'Kind' is missing in protobuf body")
    obj = decode_message(message_for(api_version, kind), raw)
    return {"apiVersion": api_version, "kind": kind, **obj}


def encode(obj: dict) -> bytes:
    """Encode a JSON-shaped object as a protobuf body with envelope, as client-go would."""
    api_version = obj.get("apiVersion") or ""
    kind = obj.get("kind") or ""
    raw = encode_message(message_for(api_version, kind), obj)
    type_meta = _tag_bytes(1, api_version.encode()) + _tag_bytes(2, kind.encode())
    return MAGIC + _tag_bytes(1, type_meta) + _tag_bytes(2, raw) + _tag_bytes(3, b"") + _tag_bytes(4, b"")


# ---------------------------------------------------------------------------- wire format


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Malformed("unexpected end of varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Malformed("varint overflow")


def _fields(data: bytes) -> dict[int, list]:
    """Field number -> raw values in order (int for varints, bytes otherwise)."""
    out: dict[int, list] = {}
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            raise _Malformed(f"illegal field number {number}")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > end:
                raise _Malformed("length-delimited field runs past the end")
            value, pos = data[pos : pos + length], pos + length
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            if pos + size > end:
                raise _Malformed("fixed-width field runs past the end")
            value, pos = data[pos : pos + size], pos + size
        elif wire == 3:
            pos = _skip_group(data, pos, number)
            continue
        else:
            raise _Malformed(f"illegal wire type {wire}")
        out.setdefault(number, []).append((wire, value))
    return out


def _skip_group(data: bytes, pos: int, number: int) -> int:
    while True:
        key, pos = _varint(data, pos)
        n, wire = key >> 3, key & 7
        if wire == 4:
            if n != number:
                raise _Malformed("mismatched end group")
            return pos
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            pos += length
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 3:
            pos = _skip_group(data, pos, n)
        else:
            raise _Malformed(f"illegal wire type {wire}")
        if pos > len(data):
            raise _Malformed("group runs past the end")


def _last_bytes(fields: dict[int, list], number: int) -> bytes:
    values = fields.get(number)
    if not values:
        return b""
    wire, value = values[-1]
    if wire != 2:
        raise _Malformed(f"field {number}: wrong wire type {wire}")
    return value


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Malformed("string field is not valid UTF-8") from None


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _enc_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag_varint(number: int, value: int) -> bytes:
    return _enc_varint(number << 3) + _enc_varint(value)


def _tag_bytes(number: int, value: bytes) -> bytes:
    return _enc_varint(number << 3 | 2) + _enc_varint(len(value)) + value


# ---------------------------------------------------------------------------- decoding


def _scalar(typ: str, wire: int, value: Any) -> Any:
    if typ in _VARINT_TYPES:
        if wire != 0:
            raise _Malformed(f"{typ} field with wire type {wire}")
        if typ == "bool":
            return value != 0
        if typ == "int32":
            return _signed(value, 32)
        if typ == "int64":
            return _signed(value, 64)
        return value & ((1 << (32 if typ == "uint32" else 64)) - 1)
    if wire != 2:
        raise _Malformed(f"{typ} field with wire type {wire}")
    if typ == "string":
        return _text(value)
    if typ == "bytes":
        return base64.b64encode(value).decode("ascii")
    raise _Malformed(f"unsupported scalar type {typ}")


def _unpack(typ: str, values: list) -> list:
    """Repeated scalars may arrive packed (one length-delimited run of varints)."""
    out = []
    for wire, value in values:
        if typ in _VARINT_TYPES and wire == 2:
            pos = 0
            while pos < len(value):
                v, pos = _varint(value, pos)
                out.append(_scalar(typ, 0, v))
        else:
            out.append(_scalar(typ, wire, value))
    return out


def _is_zero(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_is_zero(v) for v in value.values())
    return value in (None, "", 0, False) or value == []


_GO_ZERO_TIME = -62135596800  # 0001-01-01T00:00:00Z, Go's zero time.Time in Unix seconds


def _format_time(seconds: int, micros: int | None) -> str | None:
    if seconds == _GO_ZERO_TIME and not micros:
        return None  # time.Time{}.IsZero(): JSON null
    t = _EPOCH + timedelta(seconds=seconds)
    if micros is None:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"


def _decode_time(data: bytes, micro: bool) -> str | None:
    if not data:
        return None  # Go's zero Time: JSON null
    f = _fields(data)
    seconds = _signed(_last_int(f, 1), 64)
    nanos = _signed(_last_int(f, 2), 32)
    if not micro:
        return _format_time(seconds, None)  # upstream drops nanos for Time
    return _format_time(seconds, max(0, min(nanos, 999_999_999)) // 1000)


def _last_int(fields: dict[int, list], number: int) -> int:
    values = fields.get(number)
    if not values:
        return 0
    wire, value = values[-1]
    if wire != 0:
        raise _Malformed(f"field {number}: wrong wire type {wire}")
    return value


def _decode_raw_json(data: bytes) -> Any:
    raw = _fields(data).get(1)
    if not raw:
        return None
    payload = _last_bytes({1: raw}, 1)
    if not payload:
        return None
    try:
        return json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        raise _Malformed("embedded raw object is not JSON") from None


def _decode_quantity(data: bytes) -> str:
    return _text(_last_bytes(_fields(data), 1)) or "0"


def _decode_int_or_string(data: bytes) -> int | str:
    f = _fields(data)
    if _last_int(f, 1) == 1:
        return _text(_last_bytes(f, 3))
    return _signed(_last_int(f, 2), 32)


def _decode_duration(data: bytes) -> str:
    return format_duration(_signed(_last_int(_fields(data), 1), 64))


# authentication/authorization ExtraValue: a Go []string carried as a message of strings
_EXTRA_VALUES = (
    "k8s.io.api.authentication.v1.ExtraValue",
    "k8s.io.api.authorization.v1.ExtraValue",
    "k8s.io.api.certificates.v1.ExtraValue",
)


def _decode_extra_value(data: bytes) -> list[str]:
    out = []
    for wire, value in _fields(data).get(1, ()):
        if wire != 2:
            raise _Malformed(f"field 1: wrong wire type {wire}")
        out.append(_text(value))
    return out


_SPECIAL_DECODERS: dict[str, Callable[[bytes], Any]] = {
    **{t: _decode_extra_value for t in _EXTRA_VALUES},
    _TIME: lambda d: _decode_time(d, False),
    _MICROTIME: lambda d: _decode_time(d, True),
    _DURATION: _decode_duration,
    _QUANTITY: _decode_quantity,
    _INTORSTRING: _decode_int_or_string,
    _RAWEXTENSION: _decode_raw_json,
    _FIELDSV1: _decode_raw_json,
}


def _decode_value(typ: str, data: bytes) -> Any:
    special = _SPECIAL_DECODERS.get(typ)
    if special is not None:
        return special(data)
    return _decode_message(typ, data)


def _message_bytes(values: list) -> bytes:
    """A non-repeated message seen several times merges, which concatenation reproduces."""
    for wire, _ in values:
        if wire != 2:
            raise _Malformed(f"message field with wire type {wire}")
    return b"".join(v for _, v in values)


def _decode_map(typ: str, values: list) -> dict:
    out = {}
    for wire, entry in values:
        if wire != 2:
            raise _Malformed(f"map entry with wire type {wire}")
        f = _fields(entry)
        key = _text(_last_bytes(f, 1))
        raw = f.get(2)
        if typ in MESSAGES or typ in _SPECIAL_DECODERS:
            out[key] = _decode_value(typ, _message_bytes(raw) if raw else b"")
        elif raw:
            out[key] = _scalar(typ, *raw[-1])
        else:
            out[key] = {"string": "", "bytes": "", "bool": False}.get(typ, 0)
    return out


def decode_message(message: str, data: bytes) -> dict:
    """Decode one message (no envelope) into its JSON dict; unknown fields are skipped."""
    try:
        return _decode_message(message, data)
    except APIError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure on client bytes is the client's 400
        kind = message.rsplit(".", 1)[-1]
        raise bad_request(f"unable to decode {kind} from protobuf: {e}") from None


def _decode_message(message: str, data: bytes) -> dict:
    spec = MESSAGES.get(message)
    if spec is None:
        raise _Malformed(f"no table entry for message {message}")
    fields = _fields(data)
    out: dict = {}
    for number, (name, label, typ, flags) in spec.items():
        values = fields.get(number)
        is_msg = typ in MESSAGES or typ in _SPECIAL_DECODERS
        if label == "r" or label == "m" or (typ == "bytes" and not values):
            if not values:  # a nil slice, map or []byte
                if "o" not in flags:
                    out[name] = None
                continue
            if label == "m":
                out[name] = _decode_map(typ, values)
            else:
                out[name] = (
                    [_decode_value(typ, _message_bytes([v])) for v in values] if is_msg else _unpack(typ, values)
                )
            continue
        if "i" in flags:  # embedded struct: its fields sit in the parent
            out.update(_decode_message(typ, _message_bytes(values) if values else b""))
            continue
        if not values:
            if "p" in flags:
                if "o" not in flags:
                    out[name] = None
                continue
            value = _decode_value(typ, b"") if is_msg else _scalar_zero(typ)
        else:
            value = _decode_value(typ, _message_bytes(values)) if is_msg else _scalar(typ, *values[-1])
            if "p" in flags:
                out[name] = value
                continue
        if ("z" in flags or ("o" in flags and not is_msg)) and _is_zero(value):
            continue
        out[name] = value
    return out


def _scalar_zero(typ: str) -> Any:
    return {"string": "", "bool": False}.get(typ, 0)


# ---------------------------------------------------------------------------- encoding


def _enc_scalar(number: int, typ: str, value: Any) -> bytes:
    if typ == "string":
        if not isinstance(value, str):
            raise bad_request(f"expected a string, got {value!r}")
        return _tag_bytes(number, value.encode("utf-8"))
    if typ == "bytes":
        try:
            return _tag_bytes(number, gobase64.decode(value))
        except (ValueError, TypeError, AttributeError):
            raise bad_request(f"illegal base64 data: {value!r}") from None
    if typ == "bool":
        return _tag_varint(number, 1 if value else 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_request(f"expected a number, got {value!r}")
    return _tag_varint(number, int(value))


def _parse_time(value: str) -> tuple[int, int]:
    """RFC3339 -> (unix seconds, nanoseconds)."""
    m = re.fullmatch(
        r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
        r"(?:[Zz]|([+-])(\d\d):(\d\d))",
        value or "",
    )
    if not m:
        raise bad_request(f"invalid RFC3339 time {value!r}")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    t = datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc)
    if m.group(8):
        offset = timedelta(hours=int(m.group(9)), minutes=int(m.group(10)))
        t -= offset if m.group(8) == "+" else -offset
    delta = t - _EPOCH
    nanos = int((m.group(7) or "0").ljust(9, "0"))
    return delta.days * 86400 + delta.seconds, nanos


def _enc_time(value: Any, micro: bool) -> bytes:
    if value is None:
        return b""
    seconds, nanos = _parse_time(value)
    nanos = nanos // 1000 * 1000 if micro else 0
    if seconds == _GO_ZERO_TIME and not nanos:
        return b""  # Go writes a zero time as an empty message
    return _tag_varint(1, seconds) + _tag_varint(2, nanos)


def _enc_raw_json(value: Any) -> bytes:
    if value is None:
        return b""
    return _tag_bytes(1, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _enc_int_or_string(value: Any) -> bytes:
    if isinstance(value, str):
        return _tag_varint(1, 1) + _tag_varint(2, 0) + _tag_bytes(3, value.encode())
    return _tag_varint(1, 0) + _tag_varint(2, int(value or 0)) + _tag_bytes(3, b"")


_SPECIAL_ENCODERS: dict[str, Callable[[Any], bytes]] = {
    **{t: (lambda v: b"".join(_tag_bytes(1, str(x).encode()) for x in v or ())) for t in _EXTRA_VALUES},
    _TIME: lambda v: _enc_time(v, False),
    _MICROTIME: lambda v: _enc_time(v, True),
    _DURATION: lambda v: _tag_varint(1, parse_duration(v) if v is not None else 0),
    _QUANTITY: lambda v: _tag_bytes(1, str("0" if v is None else v).encode()),
    _INTORSTRING: _enc_int_or_string,
    _RAWEXTENSION: _enc_raw_json,
    _FIELDSV1: _enc_raw_json,
}


def _enc_value(typ: str, value: Any) -> bytes:
    special = _SPECIAL_ENCODERS.get(typ)
    if special is not None:
        return special(value)
    if value is not None and not isinstance(value, dict):
        raise bad_request(f"expected an object for {typ.rsplit('.', 1)[-1]}, got {value!r}")
    return encode_message(typ, value or {})


def encode_message(message: str, obj: dict) -> bytes:
    """Encode one message (no envelope) the way Go's generated marshaller does."""
    spec = MESSAGES.get(message)
    if spec is None:
        raise bad_request(f"no protobuf table entry for message {message}")
    out = bytearray()
    for number, (name, label, typ, flags) in sorted(spec.items()):
        is_msg = typ in MESSAGES or typ in _SPECIAL_ENCODERS
        if "i" in flags:
            out += _tag_bytes(number, encode_message(typ, obj))
            continue
        value = obj.get(name)
        if label == "r":
            if value is None:
                continue
            if not isinstance(value, list):
                raise bad_request(f"{name}: expected a list, got {value!r}")
            for item in value:
                out += _tag_bytes(number, _enc_value(typ, item)) if is_msg else _enc_scalar(number, typ, item)
        elif label == "m":
            if value is None:
                continue
            if not isinstance(value, dict):
                raise bad_request(f"{name}: expected an object, got {value!r}")
            for key in sorted(value):
                entry = _tag_bytes(1, str(key).encode())
                item = value[key]
                if is_msg:
                    entry += _tag_bytes(2, _enc_value(typ, item))
                elif not (typ == "bytes" and item is None):
                    entry += _enc_scalar(2, typ, item if item is not None else _scalar_zero(typ))
                out += _tag_bytes(number, entry)
        elif value is None and ("p" in flags or typ == "bytes"):
            continue
        elif is_msg:
            out += _tag_bytes(number, _enc_value(typ, value))
        else:
            out += _enc_scalar(number, typ, value if value is not None else _scalar_zero(typ))
    return bytes(out)


# ---------------------------------------------------------------------------- Go durations

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_RE = re.compile(rf"[+-]?(?:{_DURATION_PART.pattern})+|[+-]?0")


def format_duration(ns: int) -> str:
    """Go's time.Duration.String(): "1h2m3.5s", "1.5ms", "0s"."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)

    def frac(value: int, unit: int) -> str:
        whole, rest = divmod(value, unit)
        digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
        return f"{whole}.{digits}" if digits else str(whole)

    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{frac(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{frac(ns, 1_000_000)}ms"
    hours, ns = divmod(ns, 3_600_000_000_000)
    minutes, ns = divmod(ns, 60_000_000_000)
    text = frac(ns, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def parse_duration(text: str) -> int:
    """Go's time.ParseDuration, to nanoseconds."""
    if not _DURATION_RE.fullmatch(text or ""):
        raise bad_request(f"time: invalid duration {text!r}")
    total = 0
    for number, unit in _DURATION_PART.findall(text):
        whole, _, fraction = number.partition(".")
        scale = _UNITS[unit]
        total += int(whole or 0) * scale
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
    return -total if text.startswith("-") else total
