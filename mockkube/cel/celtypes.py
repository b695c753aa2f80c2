"""CEL's timestamp, duration and type values (cel-go's semantics and error wording).

Pure: no clock, no I/O. A `Timestamp` is nanoseconds since the Unix epoch within
0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z; a `Duration` is a signed number of
nanoseconds that fits an int64 (Go's time.Duration); a `CelType` is a type value
(``type(1) == int``). Kubernetes maps the OpenAPI ``date-time`` and ``duration`` formats
onto the first two.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from mockkube.cel.lib import CELRuntimeError

_NS = 1_000_000_000
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
MIN_UNIX = -62135596800  # 0001-01-01T00:00:00Z
MAX_UNIX = 253402300799  # 9999-12-31T23:59:59Z


class CelType:
    """A type value: what ``type(x)`` returns and what ``int``, ``list``... name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return type(other) is CelType and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


class Duration:
    """A signed duration in nanoseconds (int64, as Go's time.Duration)."""

    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        if ns < _INT64_MIN or ns > _INT64_MAX:
            raise CELRuntimeError("duration out of range")
        self.ns = ns

    def __eq__(self, other: object) -> bool:
        return type(other) is Duration and other.ns == self.ns

    def __lt__(self, other: "Duration") -> bool:
        return self.ns < other.ns

    def __gt__(self, other: "Duration") -> bool:
        return self.ns > other.ns

    def __hash__(self) -> int:
        return hash(("duration", self.ns))

    def __repr__(self) -> str:
        return f"duration({duration_string(self)!r})"


class Timestamp:
    """An instant in nanoseconds since the Unix epoch, years 1 to 9999, with the UTC offset
    (seconds east) it was written with: as Go's time.Time in cel-go, the accessors without
    a time zone and string() read it in that offset; equality and order are the instant's."""

    __slots__ = ("ns", "offset")

    def __init__(self, ns: int, offset: int = 0) -> None:
        if ns < MIN_UNIX * _NS or ns > MAX_UNIX * _NS + _NS - 1:
            raise CELRuntimeError("timestamp out of range")
        self.ns = ns
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.ns == self.ns

    def __lt__(self, other: "Timestamp") -> bool:
        return self.ns < other.ns

    def __gt__(self, other: "Timestamp") -> bool:
        return self.ns > other.ns

    def __hash__(self) -> int:
        return hash(("timestamp", self.ns))

    def __repr__(self) -> str:
        return f"timestamp({timestamp_string(self)!r})"


# ---------------------------------------------------------------- arithmetic


def add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is Duration and tb is Duration:
        return _duration(a.ns + b.ns, "duration overflow")
    if ta is Timestamp and tb is Duration:
        return _timestamp(a.ns + b.ns, a.offset)
    if ta is Duration and tb is Timestamp:
        return _timestamp(a.ns + b.ns, b.offset)
    return NotImplemented


def sub(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is Duration and tb is Duration:
        return _duration(a.ns - b.ns, "duration overflow")
    if ta is Timestamp and tb is Duration:
        return _timestamp(a.ns - b.ns, a.offset)
    if ta is Timestamp and tb is Timestamp:
        return _duration(a.ns - b.ns, "duration overflow")
    return NotImplemented


def _duration(ns: int, message: str) -> Duration:
    if ns < _INT64_MIN or ns > _INT64_MAX:
        raise CELRuntimeError(message)
    return Duration(ns)


def _timestamp(ns: int, offset: int = 0) -> Timestamp:
    if ns < MIN_UNIX * _NS or ns > MAX_UNIX * _NS + _NS - 1:
        raise CELRuntimeError("timestamp overflow")
    return Timestamp(ns, offset)


# ---------------------------------------------------------------- parsing and formatting

_RFC3339 = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.(\d+))?"
    r"(?:([Zz])|([+-])([01]\d|2[0-3]):([0-5]\d))"
)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28
    return 30 if m in (4, 6, 9, 11) else 31


def parse_timestamp(text: str) -> Timestamp:
    """``timestamp(string)``: RFC 3339 as cel-go accepts it (strict grammar, then Go's
    calendar checks, then the range check)."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise CELRuntimeError(
            f"type conversion error from 'string' to 'google.protobuf.Timestamp': "
            f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse'
        )
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    if d > _days_in_month(y, mo):
        raise CELRuntimeError(
            f"type conversion error from 'string' to 'google.protobuf.Timestamp': "
            f'parsing time "{text}": day out of range'
        )
    if s == 60:
        raise CELRuntimeError(
            f"type conversion error from 'string' to 'google.protobuf.Timestamp': "
            f'parsing time "{text}": second out of range'
        )
    frac = m.group(7) or ""
    nanos = int((frac + "000000000")[:9])
    seconds = _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s
    offset = 0
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        offset = offset if m.group(9) == "+" else -offset
        seconds -= offset
    if seconds < MIN_UNIX or seconds > MAX_UNIX:
        raise CELRuntimeError("timestamp out of range")
    return Timestamp(seconds * _NS + nanos, offset)


def timestamp_from_seconds(seconds: int) -> Timestamp:
    if seconds < MIN_UNIX or seconds > MAX_UNIX:
        raise CELRuntimeError("timestamp out of range")
    return Timestamp(seconds * _NS)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _datetime(t: Timestamp, tz: tzinfo | None = None) -> datetime:
    """The wall clock of t in ``tz``, or in its own offset when None."""
    seconds, nanos = divmod(t.ns, _NS)
    dt = _EPOCH + timedelta(seconds=seconds)
    if tz is None and t.offset:
        tz = timezone(timedelta(seconds=t.offset))
    if tz is not None:
        try:
            dt = dt.astimezone(tz)
        except OverflowError:
            raise CELRuntimeError("timestamp out of range") from None
    return dt


def timestamp_string(t: Timestamp, utc: bool = False) -> str:
    """Go's RFC3339Nano: the fraction without trailing zeros, the timestamp's own offset
    (``Z`` when zero) unless ``utc``."""
    offset = 0 if utc else t.offset
    dt = _datetime(Timestamp(t.ns) if utc else t)
    nanos = t.ns % _NS
    out = f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    if nanos:
        out += "." + f"{nanos:09d}".rstrip("0")
    if not offset:
        return out + "Z"
    sign = "+" if offset > 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{out}{sign}{hours:02d}:{minutes:02d}"


def timestamp_seconds(t: Timestamp) -> int:
    return t.ns // _NS


_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5
    "μs": 1_000,  # U+03BC
    "ms": 1_000_000,
    "s": _NS,
    "m": 60 * _NS,
    "h": 3600 * _NS,
}
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?([^\d.]*)")


def parse_duration(text: str) -> Duration:
    """``duration(string)``: Go's time.ParseDuration (``1h30m``, ``-1.5s``, ``300ms``)."""

    def bad(why: str = "invalid duration") -> CELRuntimeError:
        return CELRuntimeError(
            f"type conversion error from 'string' to 'google.protobuf.Duration': time: {why} \"{text}\""
        )

    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return Duration(0)
    if not s:
        raise bad()
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        whole, frac, unit = m.group(1), m.group(2), m.group(3)
        if not whole and not frac:
            raise bad()
        if not unit:
            raise bad("missing unit in duration")
        if unit not in _UNITS:
            raise bad(f'unknown unit "{unit}" in duration')
        scale = _UNITS[unit]
        v = int(whole or "0") * scale
        if frac:
            v += int(frac) * scale // (10 ** len(frac))
        total += v
        if total > 2**63 - (0 if neg else 1):
            raise bad()
        pos = m.end()
    return Duration(-total if neg else total)


def duration_string(d: Duration) -> str:
    """cel-go's string(duration): seconds with the fraction needed, then ``s``."""
    sign = "-" if d.ns < 0 else ""
    whole, frac = divmod(abs(d.ns), _NS)
    out = f"{sign}{whole}"
    if frac:
        out += "." + f"{frac:09d}".rstrip("0")
    return out + "s"


# ---------------------------------------------------------------- accessors


def _zone(name: str) -> tzinfo:
    if ":" not in name:
        if name in ("", "UTC"):
            return timezone.utc
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(name)
        except (ValueError, OSError, LookupError):
            raise CELRuntimeError(f"unknown time zone {name}") from None
        except Exception:  # noqa: BLE001 - ZoneInfoNotFoundError and invalid keys
            raise CELRuntimeError(f"unknown time zone {name}") from None
    hours, _, minutes = name.partition(":")
    try:
        hr, mn = int(hours), int(minutes)
    except ValueError:
        raise CELRuntimeError(f'strconv.Atoi: parsing "{name}": invalid syntax') from None
    if mn < 0 or mn > 59:
        raise CELRuntimeError(f"timezone offset minutes out of range [0, 59]: {name}")
    offset = hr * 60 - mn if name.startswith("-") else hr * 60 + mn
    try:
        return timezone(timedelta(minutes=offset))
    except ValueError:
        raise CELRuntimeError(f"timezone offset out of range: {name}") from None


def _local(t: Timestamp, tz: str | None) -> datetime:
    return _datetime(t, None if tz is None else _zone(tz))


def _ts_accessor(get: Any) -> Any:
    def fn(t: Timestamp, tz: str | None = None) -> int:
        return get(_local(t, tz), t)

    return fn


TIMESTAMP_ACCESSORS = {
    "getFullYear": _ts_accessor(lambda dt, t: dt.year),
    "getMonth": _ts_accessor(lambda dt, t: dt.month - 1),
    "getDayOfYear": _ts_accessor(lambda dt, t: dt.timetuple().tm_yday - 1),
    "getDate": _ts_accessor(lambda dt, t: dt.day),
    "getDayOfMonth": _ts_accessor(lambda dt, t: dt.day - 1),
    "getDayOfWeek": _ts_accessor(lambda dt, t: (dt.weekday() + 1) % 7),
    "getHours": _ts_accessor(lambda dt, t: dt.hour),
    "getMinutes": _ts_accessor(lambda dt, t: dt.minute),
    "getSeconds": _ts_accessor(lambda dt, t: dt.second),
    "getMilliseconds": _ts_accessor(lambda dt, t: t.ns % _NS // 1_000_000),
}


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


DURATION_ACCESSORS = {
    "getHours": lambda d: _trunc_div(d.ns, 3600 * _NS),
    "getMinutes": lambda d: _trunc_div(d.ns, 60 * _NS),
    "getSeconds": lambda d: _trunc_div(d.ns, _NS),
    # cel-go's Duration.Milliseconds(): the whole duration (cel-spec's test of a component is
    # one cel-go's own conformance run skips)
    "getMilliseconds": lambda d: _trunc_div(d.ns, 1_000_000),
}
