"""Compact JSON on the write path: orjson's speed, the standard library's exact bytes.

Every stored object, response body and request body goes through JSON, and the standard
library's encoder was a tenth of the write path's CPU. orjson writes the same bytes as
``json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`` for JSON-shaped data except
some small floats (``1e-05`` is ``0.00001``, ``1e-09`` is ``1e-9``), so output that could hold
one of those, non-ASCII output asked for as ASCII, and anything orjson refuses (integers
beyond 64 bits, non-string keys, types the standard library would not encode) are encoded by
the standard library instead. Decoding falls back the same way (NaN, huge numbers, lone
surrogates), so what is accepted and how it fails stay as they were (and a NaN so accepted is
written back as ``NaN``, as before).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

_DIGITS = frozenset(b"0123456789.")
_NUMBER_START = frozenset(b":,[")


def _may_differ(raw: bytes) -> bool:
    """Whether orjson's output may differ from json's: a number with a negative exponent
    (``1e-9`` against ``1e-09``) or below 1e-4 written out in full (``0.00001`` against
    ``1e-05``); checked over every float exponent and 600,000 random doubles. Only byte
    searches in C, and the few ``e-`` inside strings (``node-1``) are looked at: a regular
    expression scan cost more than the standard library's encoder. False positives only
    cost the slower encoder."""
    if b"0.0000" in raw:
        return True
    i = raw.find(b"e-")
    while i > 0:
        j = i - 1
        while j >= 0 and raw[j] in _DIGITS:
            j -= 1
        # digits (and a point) right after ":", "," or "[" (or after a minus sign there), then "e-"
        if (
            j < i - 1
            and j >= 0
            and (raw[j] in _NUMBER_START or (raw[j] == 45 and j > 0 and raw[j - 1] in _NUMBER_START))
        ):
            return True
        i = raw.find(b"e-", i + 2)
    return False


# types orjson would encode but json refuses: let json refuse them as before
_OPTS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def dumps(obj: Any, *, ascii: bool = False, sort_keys: bool = False) -> bytes:
    """``json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii, sort_keys=sort_keys).encode()``."""
    try:
        raw = orjson.dumps(obj, option=_OPTS | orjson.OPT_SORT_KEYS if sort_keys else _OPTS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        raw = None
    if raw is None or _may_differ(raw) or (ascii and not raw.isascii()):
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii, sort_keys=sort_keys).encode()
    return raw


def dumps_kept(obj: Any) -> bytes:
    """``dumps`` for bytes that are kept (the cache's and the watch history's copy of every
    object): orjson returns its whole write buffer, at least 4 KiB and doubling, so a 600-byte
    Event held 4 KiB of memory and a 5 KB pod 8 KiB; a copy holds its length alone (about
    0.2 µs for 3 KB, against the encoding's several µs)."""
    return bytes(memoryview(dumps(obj)))


def redumps(obj: Any) -> bytes:
    """``dumps`` again for an object whose bytes ``is_redumpable``: orjson alone (~2 µs for a
    pod; the checks of ``dumps`` cost several times that)."""
    return orjson.dumps(obj, option=_OPTS)


def is_redumpable(obj: Any, raw: bytes) -> bool:
    """Whether ``redumps(obj)`` writes ``raw`` (what ``dumps`` wrote for it): orjson's own
    bytes, not the standard library's."""
    try:
        return orjson.dumps(obj, option=_OPTS) == raw
    except TypeError:
        return False


class _NonFinite(float):
    """NaN or an infinity that the standard library's decoder let in: orjson would write it
    as null, but refuses this subclass, so ``dumps`` writes it as json does (``NaN``)."""


def _float(text: str) -> float:
    v = float(text)
    return v if math.isfinite(v) else _NonFinite(v)


_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # beyond 64 bits orjson reads integers as floats, json as ints


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``, with the same results and the same errors."""
    raw = data.encode() if isinstance(data, str) else data
    if _LONG_NUMBER not in raw.translate(_AS_ZEROS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data, parse_float=_float, parse_constant=_float)
