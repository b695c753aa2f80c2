"""Go's ``encoding/base64.StdEncoding`` decoder, which ``encoding/json`` uses for ``[]byte``
fields (Secret ``data``, ConfigMap ``binaryData``, a CSR's ``request``, a webhook's
``caBundle``) and kube-openapi for ``format: byte``.

Go skips ``\\r`` and ``\\n`` anywhere in the input (a PEM-style wrapped value decodes), is
not strict about the unused bits of the last quantum, and reports a malformed input as
``illegal base64 data at input byte N`` with N counted in the raw input, newlines included.
A decoded value encodes back without line breaks: :func:`canonical` is what a Go round trip
(decode, then ``json.Marshal``) stores and returns.
"""

from __future__ import annotations

import base64
import binascii
import re

_VALID = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_NL = (ord("\r"), ord("\n"))


class Base64Error(ValueError):
    """``base64.CorruptInputError``: its message is Go's."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def decode(s: str | bytes) -> bytes:
    """``base64.StdEncoding.DecodeString(s)``; raises :class:`Base64Error` as Go fails."""
    raw = s.encode("utf-8", "surrogatepass") if isinstance(s, str) else bytes(s)  # Go sees the UTF-8 bytes
    compact = raw.replace(b"\r", b"").replace(b"\n", b"") if (b"\r" in raw or b"\n" in raw) else raw
    if len(compact) % 4 == 0 and _VALID.fullmatch(compact.decode("latin-1")):
        try:
            return base64.b64decode(compact)
        except (binascii.Error, ValueError):  # pragma: no cover - the pattern admits only valid input
            pass
    raise Base64Error(_error_offset(raw))


def error(s: str | bytes) -> str:
    """Go's error message for ``s``, or '' when it decodes."""
    try:
        decode(s)
        return ""
    except Base64Error as e:
        return str(e)


def canonical(s: str) -> str:
    """``s`` as Go re-encodes it after decoding (no line breaks, zero trailing bits)."""
    return base64.b64encode(decode(s)).decode("ascii")


def _error_offset(src: bytes) -> int:
    """Where Go's ``decodeQuantum`` stops for the invalid input ``src`` (the offsets it reports)."""
    si, n = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return -1  # decoded to the end: not an error (never reached for invalid input)
                return si - j  # an incomplete quantum with padding required
            c = src[si]
            si += 1
            if c in _ALPHABET:
                j += 1
                continue
            if c in _NL:
                continue
            if c != ord("="):
                return si - 1
            if j in (0, 1):  # padding too early
                return si - 1
            if j == 2:  # "==" expected: the first "=" is consumed
                while si < n and src[si] in _NL:
                    si += 1
                if si == n:
                    return n
                if src[si] != ord("="):
                    return si - 1
                si += 1
            while si < n and src[si] in _NL:
                si += 1
            if si < n:
                return si  # trailing garbage after the padding
            return -1
        # a full quantum: go on (Go checks nothing more here in its non-strict mode)
