"""The CEL strings extension as Kubernetes enables it (cel-go ``ext.Strings``, version 2
and later): ``charAt``, ``indexOf``/``lastIndexOf`` with an offset, ``lowerAscii`` /
``upperAscii`` (ASCII letters only), ``replace`` and ``split`` with a count, ``substring``,
``trim``, ``join``, ``reverse``, ``format`` (cel-go's formatting v2) and ``strings.quote``.

Registered into the engine's one function table on import (``mockkube.cel`` imports this);
indices count code points, as cel-go's runes do. Error texts are cel-go's.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from mockkube.cel import engine
from mockkube.cel.celtypes import CelType, Duration, Timestamp, duration_string, timestamp_string
from mockkube.cel.lib import CELRuntimeError

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# Go's unicode.IsSpace (strings.TrimSpace)
_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _out_of_range(i: int) -> CELRuntimeError:
    return CELRuntimeError(f"index out of range: {i}")


def char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise _out_of_range(i)
    return s[i : i + 1]


def index_of(s: str, sub: str, offset: int = 0) -> int:
    if offset < 0 or offset > len(s):
        raise _out_of_range(offset)
    return s.find(sub, offset)


def last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset >= len(s):
        raise _out_of_range(offset)
    if sub == "":
        return offset
    return s.rfind(sub, 0, offset + len(sub))


def substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise _out_of_range(start)
        return s[start:]
    if start < 0 or start > len(s):
        raise _out_of_range(start)
    if end < 0 or end > len(s):
        raise _out_of_range(end)
    if start > end:
        raise CELRuntimeError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n if n >= 0 else -1)


def split(s: str, sep: str, n: int = -1) -> list[str]:
    """Go's strings.SplitN: n == 0 gives [], n < 0 every part, else at most n parts."""
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if 0 < n < len(chars):
            return chars[: n - 1] + ["".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1 if n > 0 else -1)


def join(xs: list, sep: str = "") -> str:
    for x in xs:
        if type(x) is not str:
            raise CELRuntimeError(f"no such overload: join(list({engine.runtime_type(x)}))")
    return sep.join(xs)


_QUOTE = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(s: str) -> str:
    return '"' + "".join(_QUOTE.get(c, c) for c in s) + '"'


# ---------------------------------------------------------------- format (cel-go formatting v2)


def _type_name(v: Any) -> str:
    return engine.type_name(engine.runtime_type(v))


def _float_text(x: float) -> str:
    """Go's strconv.FormatFloat(x, 'f', -1, 64): the shortest digits, never an exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x)) if x or math.copysign(1, x) > 0 else "-0"
    return format(Decimal(repr(x)), "f")


def _string_clause(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is engine.UInt or t is int:
        return str(int(v))
    if t is float:
        return _float_text(v)
    if t is str:
        return v
    if t is bytes:
        return v.decode("utf-8", errors="replace")
    if v is None:
        return "null"
    if t is Duration:
        return duration_string(v)
    if t is Timestamp:
        return timestamp_string(v, utc=True)  # cel-go formats timestamps in UTC
    if t is CelType:
        return v.name
    if isinstance(v, list):
        return "[" + ", ".join(_string_clause(x) for x in v) + "]"
    if isinstance(v, dict):
        entries = sorted(((_string_clause(k), _string_clause(x)) for k, x in v.items()), key=lambda e: e[0])
        return "{" + ", ".join(f"{k}: {x}" for k, x in entries) + "}"
    raise CELRuntimeError(
        "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, "
        f"maps, lists, types, durations, and timestamps, was given {_type_name(v)}"
    )


def _is_int(v: Any) -> bool:
    return type(v) in (int, engine.UInt)


def _decimal_clause(v: Any) -> str:
    if _is_int(v):
        return str(int(v))
    if type(v) is float:
        return _float_text(v)
    raise CELRuntimeError(
        f"error during formatting: decimal clause can only be used on integers, was given {_type_name(v)}"
    )


def _float_clause(kind: str, precision: int) -> Any:
    what = "fixed-point" if kind == "f" else "scientific"

    def clause(v: Any) -> str:
        if _is_int(v):
            v = float(v)
        if type(v) is not float:
            raise CELRuntimeError(
                f"error during formatting: {what} clause can only be used on doubles, was given {_type_name(v)}"
            )
        if math.isnan(v) or math.isinf(v):
            return _float_text(v)
        return f"%.{precision}{kind}" % v

    return clause


def _binary_clause(v: Any) -> str:
    if type(v) is bool:
        return "1" if v else "0"
    if _is_int(v):
        return format(int(v), "b")
    raise CELRuntimeError(
        f"error during formatting: only integers and bools can be formatted as binary, was given {_type_name(v)}"
    )


def _octal_clause(v: Any) -> str:
    if _is_int(v):
        return format(int(v), "o")
    raise CELRuntimeError(
        f"error during formatting: octal clause can only be used on integers, was given {_type_name(v)}"
    )


def _hex_clause(upper: bool) -> Any:
    def clause(v: Any) -> str:
        if _is_int(v):
            out = format(int(v), "x")
        elif type(v) is str:
            out = v.encode("utf-8").hex()
        elif type(v) is bytes:
            out = v.hex()
        else:
            raise CELRuntimeError(
                "error during formatting: only integers, byte buffers, and strings can be formatted as hex, "
                f"was given {_type_name(v)}"
            )
        return out.upper() if upper else out

    return clause


_CLAUSE = re.compile(r"%(?:\.(\d+))?(.?)")


def format_string(fmt: str, args: list) -> str:
    """``"...".format([args])``: %s %d %f %e %b %o %x %X, ``%.Nf``/``%.Ne``, ``%%``."""
    out: list[str] = []
    pos = 0
    index = 0
    while True:
        at = fmt.find("%", pos)
        if at < 0:
            out.append(fmt[pos:])
            return "".join(out)
        out.append(fmt[pos:at])
        if fmt.startswith("%%", at):
            out.append("%")
            pos = at + 2
            continue
        m = _CLAUSE.match(fmt, at)
        precision, verb = m.group(1), m.group(2)
        if verb == "s" and precision is None:
            clause = _string_clause
        elif verb == "d" and precision is None:
            clause = _decimal_clause
        elif verb in ("f", "e"):
            clause = _float_clause(verb, 6 if precision is None else int(precision))
        elif verb == "b" and precision is None:
            clause = _binary_clause
        elif verb == "o" and precision is None:
            clause = _octal_clause
        elif verb in ("x", "X") and precision is None:
            clause = _hex_clause(verb == "X")
        else:
            raise CELRuntimeError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
        if index >= len(args):
            raise CELRuntimeError(f"index {index} out of range")
        out.append(clause(args[index]))
        index += 1
        pos = m.end()


_S, _I = "string", "int"
FUNCTIONS: dict[str, list] = {
    "charAt": [(_S, (_I,), _S, char_at)],
    "indexOf": [(_S, (_S,), _I, index_of), (_S, (_S, _I), _I, index_of)],
    "lastIndexOf": [(_S, (_S,), _I, last_index_of), (_S, (_S, _I), _I, last_index_of)],
    "lowerAscii": [(_S, (), _S, lambda s: s.translate(_LOWER))],
    "upperAscii": [(_S, (), _S, lambda s: s.translate(_UPPER))],
    "replace": [(_S, (_S, _S), _S, replace), (_S, (_S, _S, _I), _S, replace)],
    "split": [(_S, (_S,), ("list", _S), split), (_S, (_S, _I), ("list", _S), split)],
    "substring": [(_S, (_I,), _S, substring), (_S, (_I, _I), _S, substring)],
    "trim": [(_S, (), _S, lambda s: s.strip(_SPACE))],
    "join": [(("list", _S), (), _S, join), (("list", _S), (_S,), _S, join)],
    "reverse": [(_S, (), _S, lambda s: s[::-1])],
    "format": [(_S, ("list",), _S, format_string)],
    "strings.quote": [(None, (_S,), _S, quote)],
}


def register() -> None:
    """Put the extension's string overloads in the engine's table (replacing the string
    receiver overloads of the same name; list overloads such as ``indexOf`` stay)."""
    for name, overloads in FUNCTIONS.items():
        have = engine._FUNCTIONS.setdefault(name, [])
        have[:] = [o for o in have if o[0] not in (_S, ("list", _S))]
        for o in overloads:
            if o not in have:
                have.append(o)


register()
