"""A small, schema-less parser for the protobuf text format, as far as cel-spec's
conformance data (``tests/simple/testdata/*.textproto``) uses it.

The result is a tree of `Message` objects: field name -> list of values in file order
(every field is treated as repeated; the reader knows which ones are singular). Values are
`Message`, `bytes` (string literals: text format strings are byte strings, escapes
included; string fields are decoded as UTF-8 by the reader), `int`, `float`, or `Ident`
(bare identifiers: enum names, ``true``/``false``).

Supported: ``#`` comments; ``name: value``, ``name {...}`` / ``name: {...}`` and ``<...>``;
``[a, b]`` list values; ``,``/``;`` separators; adjacent string concatenation; the C
escapes protobuf accepts (``\\a \\b \\f \\n \\r \\t \\v \\\\ \\' \\" \\? \\ooo \\xHH
\\uHHHH \\UHHHHHHHH``); decimal, hex and octal integers, floats (with an optional ``f``
suffix), ``inf``/``infinity``/``nan``; ``[type.googleapis.com/...]`` field names
(expanded ``Any``) and ``[extension.name]``.

``\\?`` reads as ``?``, as in Go's prototext (which cel-go's conformance runner uses) and
C++; Python protobuf's text_format keeps it as two characters, which changes expected
values in parse.textproto. Checked once against protobuf's text_format with stubs
generated from cel-spec's protos (not kept here): the same tree for all 2,456 tests of the
30 files at cel-spec 508bd98, apart from the 46 strings holding ``\\?``, which were not
compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["Ident", "Message", "TextFormatError", "parse"]


class TextFormatError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


class Ident(str):
    """A bare identifier value (enum name, true/false)."""


class Message:
    """One message: `fields` maps a field name to its values in file order."""

    __slots__ = ("fields",)

    def __init__(self) -> None:
        self.fields: dict[str, list[Any]] = {}

    def add(self, name: str, value: Any) -> None:
        self.fields.setdefault(name, []).append(value)

    def has(self, name: str) -> bool:
        return name in self.fields

    def all(self, name: str) -> list[Any]:
        return self.fields.get(name, [])

    def get(self, name: str, default: Any = None) -> Any:
        """The last value of a field (text format: a repeated singular field keeps the last)."""
        values = self.fields.get(name)
        return values[-1] if values else default

    def str(self, name: str, default: str = "") -> str:
        v = self.get(name)
        if v is None:
            return default
        if isinstance(v, bytes):
            return v.decode("utf-8")
        return str(v)

    def __repr__(self) -> str:
        return f"Message({self.fields!r})"


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>[{}<>\[\]:,;])
  | (?P<num>[-+]?0[xX][0-9a-fA-F]+|[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[fF]?)
  | (?P<word>[-+]?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<path>[/])
""",
    re.VERBOSE,
)

_INT = re.compile(r"^[-+]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[fF]?$")
_SPECIAL_FLOATS = {"inf": float("inf"), "infinity": float("inf"), "nan": float("nan")}
_SIMPLE_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TextFormatError(f"unexpected character {text[pos]!r}", line)
        kind = m.lastgroup
        value = m.group()
        if kind == "num":
            kind = "word"
        if kind != "ws":
            yield kind, value, line
        line += value.count("\n")
        pos = m.end()


def unescape(literal: str, line: int = 0) -> bytes:
    """The bytes of one quoted text-format string literal (quotes included)."""
    body = literal[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        i += 1
        if i >= len(body):
            raise TextFormatError("string ends in a backslash", line)
        e = body[i]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 1
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i:])
            assert m is not None
            code = int(m.group(), 8)
            if code > 255:
                raise TextFormatError(f"octal escape out of range: \\{m.group()}", line)
            out.append(code)
            i += len(m.group())
        elif e in "xX":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 1 :])
            if m is None:
                raise TextFormatError("\\x with no hex digits", line)
            out.append(int(m.group(), 16))
            i += 1 + len(m.group())
        elif e in "uU":
            n = 4 if e == "u" else 8
            digits = body[i + 1 : i + 1 + n]
            if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise TextFormatError(f"bad \\{e} escape", line)
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise TextFormatError(f"\\{e} escape out of range", line)
            out += chr(code).encode("utf-8", "surrogatepass")
            i += 1 + n
        else:
            raise TextFormatError(f"unknown escape \\{e}", line)
    return bytes(out)


def _scalar(word: str, line: int) -> Any:
    if _INT.match(word):
        return int(word, 0) if not re.match(r"^[-+]?0[0-7]+$", word) else int(word, 8)
    low = word.lower()
    sign = -1.0 if low.startswith("-") else 1.0
    if low.lstrip("+-") in _SPECIAL_FLOATS:
        return sign * _SPECIAL_FLOATS[low.lstrip("+-")]
    if _FLOAT.match(word):
        return float(word.rstrip("fF"))
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
        return Ident(word)
    raise TextFormatError(f"bad scalar {word!r}", line)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = list(_tokens(text))
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def line(self) -> int:
        t = self.peek()
        return t[2] if t else (self.toks[-1][2] if self.toks else 1)

    def next(self) -> tuple[str, str, int]:
        t = self.peek()
        if t is None:
            raise TextFormatError("unexpected end of input", self.line())
        self.i += 1
        return t

    def accept(self, value: str) -> bool:
        t = self.peek()
        if t is not None and t[0] == "punct" and t[1] == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            t = self.peek()
            raise TextFormatError(f"expected {value!r}, got {t[1] if t else 'end of input'!r}", self.line())

    def message(self, close: str | None) -> Message:
        msg = Message()
        while True:
            t = self.peek()
            if t is None:
                if close is not None:
                    raise TextFormatError(f"missing {close!r}", self.line())
                return msg
            if t[0] == "punct" and t[1] == close:
                self.i += 1
                return msg
            name = self.field_name()
            if self.accept(":"):
                t = self.peek()
                if t is not None and t[0] == "punct" and t[1] == "[":
                    self.i += 1
                    if not self.accept("]"):
                        while True:
                            msg.add(name, self.value())
                            if self.accept("]"):
                                break
                            self.expect(",")
                else:
                    msg.add(name, self.value())
            else:
                t = self.peek()
                if t is None or t[0] != "punct" or t[1] not in "{<":
                    raise TextFormatError(f"field {name!r}: expected ':' or a message", self.line())
                msg.add(name, self.value())
            self.accept(",") or self.accept(";")

    def field_name(self) -> str:
        kind, value, line = self.next()
        if kind == "word":
            return value
        if kind == "punct" and value == "[":
            parts = []
            while not self.accept("]"):
                parts.append(self.next()[1])
            return "[" + "".join(parts) + "]"
        raise TextFormatError(f"expected a field name, got {value!r}", line)

    def value(self) -> Any:
        kind, value, line = self.next()
        if kind == "punct" and value in "{<":
            return self.message("}" if value == "{" else ">")
        if kind == "str":
            out = unescape(value, line)
            while (t := self.peek()) is not None and t[0] == "str":
                out += unescape(self.next()[1], t[2])
            return out
        if kind == "word":
            return _scalar(value, line)
        raise TextFormatError(f"unexpected {value!r}", line)


def parse(text: str) -> Message:
    """Parse a whole text-format document into its top-level message."""
    return _Parser(text).message(None)
