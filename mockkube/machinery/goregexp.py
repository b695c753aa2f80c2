"""Regular expressions as Go's ``regexp`` package reads them (RE2 syntax and semantics).

Kubernetes evaluates CEL's ``matches``/``find``/``findAll`` and OpenAPI ``pattern`` with Go's
``regexp``; Python's ``re`` accepts what RE2 refuses (``x++``, look-arounds, back-references)
and differs where both accept (``$`` before a final newline, Unicode ``\\d``, no ``\\pL`` or
``[[:alpha:]]``). google-re2 is the RE2 library Go's package was modelled on; its errors are
reworded as Go's ``error parsing regexp: <code>: `<arg>```.
"""

from __future__ import annotations

from functools import lru_cache

from re2 import _re2  # google-re2: the pybind module (the ``re2`` wrapper costs 5x per call)

_OPTIONS = _re2.RE2.Options()
_OPTIONS.log_errors = False  # RE2 logs parse errors to stderr by default
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_NULL = (-1, -1)

# RE2's error texts (re2/regexp.cc) -> Go's regexp/syntax ErrorCode texts
_GO_CODES = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


class RegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses; the message is Go's."""


def _go_message(raw: str, pattern: str) -> str:
    code, sep, arg = raw.partition(": ")
    go = _GO_CODES.get(code)
    if go is None:  # RE2 texts with no colon, or ones Go words alike
        go, arg = (_GO_CODES.get(raw, raw), pattern) if not sep else (code, arg)
    if go == "missing closing )":
        arg = pattern  # Go quotes the whole expression for an unclosed group
    return f"error parsing regexp: {go}: `{arg}`"


class Regexp:
    """A compiled pattern; positions are characters, as Python strings count them."""

    __slots__ = ("pattern", "_re")

    def __init__(self, pattern: str, compiled: object) -> None:
        self.pattern = pattern
        self._re = compiled

    def search(self, text: str) -> bool:
        """Go's ``MatchString``: a match anywhere."""
        data = text.encode()
        return self._re.Match(_UNANCHORED, data, 0, len(data))[0] != _NULL  # type: ignore[attr-defined]

    def find(self, text: str) -> str:
        """Go's ``FindString``: the leftmost match, "" when none."""
        data = text.encode()
        start, end = self._re.Match(_UNANCHORED, data, 0, len(data))[0]  # type: ignore[attr-defined]
        return "" if start < 0 else data[start:end].decode()

    def find_all(self, text: str, n: int = -1) -> list[str]:
        """Go's ``FindAllString``: successive non-overlapping matches, an empty match right
        after a previous match skipped, at most ``n`` (all when negative)."""
        data = text.encode()
        out: list[str] = []
        pos, prev_end, size = 0, -1, len(data)
        while pos <= size and (n < 0 or len(out) < n):
            start, end = self._re.Match(_UNANCHORED, data, pos, size)[0]  # type: ignore[attr-defined]
            if start < 0:
                break
            if not (start == end == prev_end):
                out.append(data[start:end].decode())
            prev_end = end
            if end > pos:
                pos = end
            else:  # an empty match: step over one UTF-8 character
                pos += 1
                while pos < size and data[pos] & 0xC0 == 0x80:
                    pos += 1
        return out


@lru_cache(maxsize=1024)
def compile(pattern: str) -> Regexp:  # noqa: A001 - as Go's regexp.Compile
    """The pattern compiled, or RegexpError with Go's message."""
    compiled = _re2.RE2(pattern.encode(), _OPTIONS)
    if not compiled.ok():
        raw = compiled.error()
        raise RegexpError(_go_message(raw.decode() if isinstance(raw, bytes) else str(raw), pattern))
    return Regexp(pattern, compiled)
