"""Query parameter values as apimachinery's conversions read them (Go's strconv underneath):
integers as strconv.ParseInt, with its error text in a 400, booleans as
Convert_Slice_string_To_bool, and Go's quoting for the messages. Shared by the API server's
query parsing (apiserver/http/params.py) and the options both it and a kubelet decode
(podlogoptions.py)."""

from __future__ import annotations

from mockkube.machinery import errors


def convert_bool(v: str) -> bool:
    """apimachinery's Convert_Slice_string_To_bool: never an error; "0" and "false" (any
    case) are false, anything else (even an empty value) true."""
    return not (v == "0" or v.lower() == "false")


def go_quote(s: str) -> str:
    """Go's strconv.Quote: printable characters kept, the rest escaped."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_INT64 = 2**63


def _int64(v: str) -> tuple[int | None, str]:
    """strconv.ParseInt(v, 10, 64): the value, or None and the reason it is refused."""
    digits = v[1:] if v[:1] in ("+", "-") else v
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None, "invalid syntax"
    n = int(v)
    if not -_INT64 <= n < _INT64:
        return None, "value out of range"
    return n, ""


def int64_or_none(v: str) -> int | None:
    """strconv.ParseInt(v, 10, 64), None where it errs (label selectors' gt/lt operands)."""
    return _int64(v)[0]


def parse_int64(v: str) -> int:
    """strconv.ParseInt(v, 10, 64), raising a 400 with its error text as the message, as
    DecodeParameters' BadRequest carries it."""
    n, why = _int64(v)
    if n is None:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(v)}: {why}")
    return n
