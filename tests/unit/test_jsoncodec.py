"""jsoncodec: orjson's speed with exactly the standard library's bytes and errors."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest

from mockkube.machinery import jsoncodec


def std(obj, ascii=False, sort_keys=False) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii, sort_keys=sort_keys).encode()


def floats() -> list[float]:
    rng = random.Random(7)
    vals = [float(f"{m}e{e}") for e in range(-330, 310) for m in (1, 1.5, 3.14159, 9.999999, 4.9)]
    vals += [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 3) for _ in range(20_000)]
    vals += [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(20_000)]
    return [v for v in vals if math.isfinite(v)]


def test_floats_are_written_as_json_writes_them():
    for v in floats():
        for doc in ([v], {"a": v}, {"a": "node-1e-5", "b": [1, -v]}):
            assert jsoncodec.dumps(doc) == std(doc), doc


@pytest.mark.parametrize(
    "doc",
    [
        {"s": '<&>\u2028\u00e9\x00\x1f\x7f"\\', "k\u00e9": [True, False, None, 0, -0.0, 1.0, 2**63 - 1, -(2**63)]},
        {"big": 2**64 + 1},
        {1: "int key"},
        [(1, 2)],
        {"uid": "a7b5e0c6-7f4e-4a8a-9d6a-1b2c3d4e5f60"},
        {"b": 1, "a": {"d": 0.5, "c": "x"}},
    ],
)
def test_documents_are_written_as_json_writes_them(doc):
    for ascii in (False, True):
        for sort_keys in (False, True):
            assert jsoncodec.dumps(doc, ascii=ascii, sort_keys=sort_keys) == std(doc, ascii, sort_keys)


def test_what_json_refuses_stays_refused():
    import datetime

    with pytest.raises(TypeError):
        jsoncodec.dumps({"t": datetime.datetime(2026, 1, 1)})
    with pytest.raises(UnicodeEncodeError):
        jsoncodec.dumps({"s": "\ud800"})


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1,"a":2}',
        b'{"a":1.0000000000000001}',
        b'  {"a":[]} \n',
        b'{"a":1e400}',
        b'{"a":NaN,"b":-Infinity}',
        b'{"a":"\\ud800"}',
        b'{"a":123456789012345678901234567890}',
        b'"x"',
        b'{"a":-0}',
        b'{"a":-9223372036854775809,"b":18446744073709551616}',
        '{"a":"\u00e9"}',
    ],
)
def test_loads_as_json_loads(raw):
    got, want = jsoncodec.loads(raw), json.loads(raw)
    assert repr(got) == repr(want)
    if "ud800" not in str(raw):
        assert jsoncodec.dumps(got) == std(want)  # a NaN let in is written back as NaN


@pytest.mark.parametrize("raw", [b"", b"{", b'{"a":}', b"\xff", b"[" * 5000])
def test_loads_fails_as_json_loads(raw):
    with pytest.raises(Exception) as want:
        json.loads(raw)
    with pytest.raises(type(want.value)) as got:
        jsoncodec.loads(raw)
    assert str(got.value) == str(want.value)
