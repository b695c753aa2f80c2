"""CEL literals and conversions as cel-go has them: bytes literals, bool/uint/int
conversions, int-double comparisons at the int64 limits. Cases ported from google/cel-spec's
tests/simple/testdata (parse, basic, conversions, comparisons), written out here because CI
has no cel-spec data."""

from __future__ import annotations

import pytest

from mockkube.cel import engine
from mockkube.cel.engine import UInt


def ev(expr: str) -> object:
    return engine.compile_with(expr, (), kubernetes=False).evaluate({})


VALUES = [
    # parse.textproto bytes_literals: escapes are bytes, not UTF-8 encoded code points
    ("b' \\000 \\012 \\177 \\377 '", b" \x00 \n \x7f \xff "),
    ('b" \\x00 \\x0A \\x7F \\xFF "', b" \x00 \n \x7f \xff "),
    ("b''' \\X00 \\X0A \\X7F \\XFF '''", b" \x00 \n \x7f \xff "),
    ("b'\\000\\xff'", b"\x00\xff"),  # basic self_eval_bytes_invalid_utf8
    ("b'ÿ' == b'\\303\\277'", True),  # comparisons eq_bytes
    ("b'' + b'\\xffoo'", b"\xffoo"),  # string bytes_concat
    ("rb'\\xff'", b"\\xff"),
    ("b'\\u00ff'", b"\xc3\xbf"),
    ("size(b'\\xff')", 1),
    # conversions.textproto
    ("bytes('\\377') == b'\\377'", False),
    ("string(b'\\303\\277')", "ÿ"),
    ("bool('1')", True),
    ("bool('t')", True),
    ("bool('TRUE')", True),
    ("bool('True')", True),
    ("bool('0')", False),
    ("bool('f')", False),
    ("bool('FALSE')", False),
    ("bool('False')", False),
    ("uint('300')", UInt(300)),
    ("uint(42.9)", UInt(42)),
    ("int(-9223372036854775807.0 + 1024.0)", -9223372036854774784),
    # comparisons.textproto: int vs double compare as doubles (lossy at the limits)
    ("dyn(9223372036854775807) < 9223372036854775808.0", False),
    ("dyn(9223372036854775808.0) > 9223372036854775807", False),
    ("dyn(9223372036854775808.0) <= 9223372036854775807", True),
    ("dyn(9223372036854775807) >= 9223372036854775808.0", True),
    ("dyn(1) < 1.5", True),
    ("dyn(2u) > 1.5", True),
    ("dyn(1.0) == 1", True),
]

ERRORS = [
    ("string(b'\\000\\xff')", "invalid UTF-8"),
    ("int(-9223372036854775808.0)", "integer overflow"),
    ("int(9223372036854775807.0)", "integer overflow"),
    ("uint(-1.0)", "unsigned integer overflow"),
    ("uint(18446744073709551616.0)", "unsigned integer overflow"),
    ("uint('-1')", "unsigned integer overflow"),
    ("uint('x')", 'strconv.ParseUint: parsing "x": invalid syntax'),
    ("bool('yes')", 'strconv.ParseBool: parsing "yes": invalid syntax'),
]


@pytest.mark.parametrize(("expr", "want"), VALUES)
def test_value(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize(("expr", "want"), ERRORS)
def test_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        ev(expr)
    assert want in exc.value.message


def test_dyn_is_not_a_type_value() -> None:
    with pytest.raises(engine.CELError, match="undeclared reference to 'dyn'"):
        engine.compile_with("dyn", ())
