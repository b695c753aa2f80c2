"""CEL timestamps, durations and type values: cases ported from google/cel-spec's
tests/simple/testdata/timestamps.textproto and conversions.textproto (expression, expected
value or error), written out here because CI has no cel-spec data."""

from __future__ import annotations

import pytest

from mockkube.cel import engine
from mockkube.cel.celtypes import CelType, Duration, Timestamp

NS = 1_000_000_000


def ev(expr: str, **variables: object) -> object:
    decls = tuple(sorted((k, "dyn") for k in variables))
    return engine.compile_with(expr, decls, kubernetes=False).evaluate(dict(variables))


# (expression, expected value); every one also runs through the checker
VALUES = [
    # cel-spec timestamps.textproto: timestamp_conversions / duration_conversions
    ("int(timestamp('2009-02-13T23:31:30Z'))", 1234567890),
    ("string(timestamp('2009-02-13T23:31:30Z'))", "2009-02-13T23:31:30Z"),
    ("string(timestamp('9999-12-31T23:59:59.999999999Z'))", "9999-12-31T23:59:59.999999999Z"),
    ("type(timestamp('2009-02-13T23:31:30Z'))", CelType("google.protobuf.Timestamp")),
    ("google.protobuf.Timestamp == type(timestamp('2009-02-13T23:31:30Z'))", True),
    ("string(duration('1000000s'))", "1000000s"),
    ("type(duration('1000000s'))", CelType("google.protobuf.Duration")),
    ("google.protobuf.Duration == type(duration('1000000s'))", True),
    # timestamp_selectors
    ("timestamp('2009-02-13T23:31:30Z').getDate()", 13),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfMonth()", 12),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", 5),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfYear()", 43),
    ("timestamp('2009-02-13T23:31:30Z').getFullYear()", 2009),
    ("timestamp('2009-02-13T23:31:30Z').getHours()", 23),
    ("timestamp('2009-02-13T23:31:20.123456789Z').getMilliseconds()", 123),
    ("timestamp('2009-02-13T23:31:30Z').getMinutes()", 31),
    ("timestamp('2009-02-13T23:31:30Z').getMonth()", 1),
    ("timestamp('2009-02-13T23:31:30Z').getSeconds()", 30),
    # timestamp_selectors_tz
    ("timestamp('2009-02-13T23:31:30Z').getDate('Australia/Sydney')", 14),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfMonth('US/Central')", 12),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfMonth('+11:00')", 13),
    ("timestamp('2009-02-13T02:00:00Z').getDayOfMonth('-02:30')", 11),
    ("timestamp('2009-02-13T02:00:00Z').getDayOfMonth('America/St_Johns')", 11),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek('UTC')", 5),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfYear('US/Central')", 43),
    ("timestamp('2009-02-13T23:31:30Z').getFullYear('-09:30')", 2009),
    ("timestamp('2009-02-13T23:31:30Z').getHours('02:00')", 1),
    ("timestamp('2009-02-13T23:31:30Z').getMinutes('Asia/Kathmandu')", 16),
    ("timestamp('2009-02-13T23:31:30Z').getMonth('UTC')", 1),
    ("timestamp('2009-02-13T23:31:30Z').getSeconds('-00:00')", 30),
    # comparisons
    ("timestamp('2009-02-13T23:31:30Z') == timestamp('2009-02-13T23:31:30Z')", True),
    ("timestamp('2009-02-13T23:31:29Z') == timestamp('2009-02-13T23:31:30Z')", False),
    ("timestamp('2000-01-01T00:00:00Z') != timestamp('2001-01-01T00:00:00Z')", True),
    ("duration('123s') == duration('123s')", True),
    ("duration('60s') == duration('3600s')", False),
    ("duration('86400s') != duration('86164s')", True),
    ("timestamp('2009-02-13T23:00:00Z') <= timestamp('2009-02-13T22:59:59Z')", False),
    ("timestamp('2009-02-13T23:00:00Z') < timestamp('2009-03-13T23:00:00Z')", True),
    ("timestamp('2009-02-13T22:58:00Z') >= timestamp('2009-02-13T23:00:00Z')", False),
    ("timestamp('2009-02-13T23:59:00Z') > timestamp('2009-02-13T23:00:00Z')", True),
    ("duration('300s') <= duration('200s')", False),
    ("duration('200s') < duration('300s')", True),
    ("duration('120s') >= duration('200s')", False),
    ("duration('300s') > duration('200s')", True),
    # arithmetic
    ("timestamp('2009-02-13T23:00:00Z') + duration('240s') == timestamp('2009-02-13T23:04:00Z')", True),
    ("duration('120s') + timestamp('2009-02-13T23:01:00Z') == timestamp('2009-02-13T23:03:00Z')", True),
    ("duration('600s') + duration('50s') == duration('650s')", True),
    (
        "timestamp('0001-01-01T00:00:01.000000001Z') + duration('-999999999ns') "
        "== timestamp('0001-01-01T00:00:00.000000002Z')",
        True,
    ),
    (
        "timestamp('0001-01-01T00:00:01.999999999Z') + duration('999999999ns') "
        "== timestamp('0001-01-01T00:00:02.999999998Z')",
        True,
    ),
    ("timestamp('2009-02-13T23:10:00Z') - duration('600s') == timestamp('2009-02-13T23:00:00Z')", True),
    ("timestamp('2009-02-13T23:31:00Z') - timestamp('2009-02-13T23:29:00Z') == duration('120s')", True),
    ("duration('900s') - duration('42s') == duration('858s')", True),
    # duration selectors
    ("duration('10000s').getHours()", 2),
    ("duration('3730s').getMinutes()", 62),
    ("duration('3730s').getSeconds()", 3730),
    # Go's time.ParseDuration forms, string() as cel-go prints them
    ("duration('1h30m') == duration('5400s')", True),
    ("string(duration('-1.5s'))", "-1.5s"),
    ("string(duration('300ms'))", "0.3s"),
    ("int(duration('1us'))", 1000),
    ("duration('0') == duration('0s')", True),
    # conversions.textproto: timestamp from int / string with an offset
    ("timestamp(1000000000) == timestamp('2001-09-09T01:46:40Z')", True),
    # cel-go keeps the offset a timestamp was written with (Go's time.Time location): string()
    # and the accessors without a time zone read the wall clock there; "%s" formats in UTC
    ("string(timestamp('2009-02-13T23:31:30+01:00'))", "2009-02-13T23:31:30+01:00"),
    ("string(timestamp('2009-02-13T23:31:30.5-02:30') + duration('1h'))", "2009-02-14T00:31:30.5-02:30"),
    ("timestamp('2009-02-13T23:31:30+01:00').getHours()", 23),
    ("timestamp('2009-02-13T23:31:30+01:00').getHours('UTC')", 22),
    ("timestamp('2009-02-13T23:31:30+01:00') == timestamp('2009-02-13T22:31:30Z')", True),
    ("'%s'.format([timestamp('2009-02-13T23:31:30+01:00')])", "2009-02-13T22:31:30Z"),
    ("string(timestamp('2009-02-13T23:31:30+00:00'))", "2009-02-13T23:31:30Z"),
    ("timestamp(timestamp('2009-02-13T23:31:30Z')) == timestamp('2009-02-13T23:31:30Z')", True),
    ("duration(duration('1s')) == duration('1s')", True),
    # type values
    ("type(1) == int", True),
    ("type(1u) == uint", True),
    ("type(1.0) == double", True),
    ("type('a') == string", True),
    ("type(b'a') == bytes", True),
    ("type(true) == bool", True),
    ("type(null) == null_type", True),
    ("type([1]) == list", True),
    ("type({1: 2}) == map", True),
    ("type(int) == type", True),
    ("type(type(1)) == type", True),
    ("type(1) == uint", False),
    ("int", CelType("int")),
]

# (expression, a part of the error message cel-go reports)
ERRORS = [
    ("timestamp('0000-01-01T00:00:00Z')", "range"),
    ("timestamp(-62135596801)", "range"),
    ("timestamp('10000-01-01T00:00:00Z')", "parsing time"),
    ("timestamp(253402300800)", "range"),
    ("timestamp('0001-01-01T00:00:00Z') + duration('-1s')", "timestamp overflow"),
    ("timestamp('9999-12-31T23:59:59Z') + duration('1s')", "timestamp overflow"),
    ("timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')", "timestamp overflow"),
    ("timestamp('0001-01-01T00:00:00Z') + duration('-1ns')", "timestamp overflow"),
    ("timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')", "duration overflow"),
    ("timestamp('0001-01-01T00:00:00Z') - timestamp('9999-12-31T23:59:59Z')", "duration overflow"),
    ("duration('-320000000000s')", "invalid duration"),
    ("duration('320000000000s')", "invalid duration"),
    ("duration('1')", "missing unit"),
    ("duration('1d')", 'unknown unit "d"'),
    ("timestamp('2009-02-30T00:00:00Z')", "day out of range"),
    ("timestamp('2009-02-13 23:31:30Z')", "parsing time"),
    ("timestamp('2009-02-13T23:31:30Z').getHours('Mars/Olympus')", "unknown time zone Mars/Olympus"),
    ("timestamp('2009-02-13T23:31:30Z').getHours('+01:60')", "timezone offset minutes out of range [0, 59]"),
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


def test_bound_values_and_accessors() -> None:
    # cel-go: the whole duration in milliseconds (Go's Duration.Milliseconds; cel-spec's test of
    # the millisecond part is one cel-go's conformance run skips, and Kubernetes' tests expect this)
    assert ev("x.getMilliseconds()", x=Duration(123 * NS + 321456789)) == 123321
    assert ev("x.getFullYear()", x=Timestamp(1234567890 * NS)) == 2009
    assert ev("x - y", x=Timestamp(10 * NS), y=Timestamp(4 * NS)) == Duration(6 * NS)


def test_checker_types() -> None:
    assert engine.type_name(engine.compile_with("timestamp('2009-02-13T23:31:30Z')", ()).output_type) == (
        "google.protobuf.Timestamp"
    )
    assert engine.type_name(engine.compile_with("duration('1s') + duration('1s')", ()).output_type) == (
        "google.protobuf.Duration"
    )
    assert engine.type_name(engine.compile_with("type(1)", ()).output_type) == "type(int)"
    with pytest.raises(engine.CELError, match="found no matching overload for '_\\+_'"):
        engine.compile_with("timestamp('2009-02-13T23:31:30Z') + timestamp('2009-02-13T23:31:30Z')", ())
    with pytest.raises(engine.CELError, match="found no matching overload for '_<_'"):
        engine.compile_with("timestamp('2009-02-13T23:31:30Z') < duration('1s')", ())
