"""Table tests taken from upstream pkg/api/resource/quantity_test.go."""

import pytest

from mockkube.machinery.quantity import (
    BINARY_SI as BIN,
)
from mockkube.machinery.quantity import (
    DECIMAL_EXPONENT as EXP,
)
from mockkube.machinery.quantity import (
    DECIMAL_SI as DEC,
)
from mockkube.machinery.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Quantity,
    canonicalize,
    parse_quantity,
)

MAXI64 = (1 << 63) - 1

# TestQuantityParse: input -> (mantissa, exponent, format)
PARSE = [
    ("0", 0, 0, DEC),
    ("0n", 0, 0, DEC),
    ("0u", 0, 0, DEC),
    ("0m", 0, 0, DEC),
    ("0Ki", 0, 0, BIN),
    ("0k", 0, 0, DEC),
    ("0Mi", 0, 0, BIN),
    ("0M", 0, 0, DEC),
    ("0Gi", 0, 0, BIN),
    ("0G", 0, 0, DEC),
    ("0Ti", 0, 0, BIN),
    ("0T", 0, 0, DEC),
    ("1", 1, 0, DEC),
    ("1Ki", 1024, 0, BIN),
    ("8Ki", 8 * 1024, 0, BIN),
    ("7Mi", 7 * 1024**2, 0, BIN),
    ("6Gi", 6 * 1024**3, 0, BIN),
    ("5Ti", 5 * 1024**4, 0, BIN),
    ("4Pi", 4 * 1024**5, 0, BIN),
    ("3Ei", 3 * 1024**6, 0, BIN),
    ("10Ti", 10 * 1024**4, 0, BIN),
    ("100Ti", 100 * 1024**4, 0, BIN),
    ("5n", 5, -9, DEC),
    ("4u", 4, -6, DEC),
    ("3m", 3, -3, DEC),
    ("9", 9, 0, DEC),
    ("8k", 8, 3, DEC),
    ("50k", 5, 4, DEC),
    ("7M", 7, 6, DEC),
    ("6G", 6, 9, DEC),
    ("5T", 5, 12, DEC),
    ("40T", 4, 13, DEC),
    ("300T", 3, 14, DEC),
    ("2P", 2, 15, DEC),
    ("1E", 1, 18, DEC),
    ("1E-3", 1, -3, EXP),
    ("1e3", 1, 3, EXP),
    ("1E6", 1, 6, EXP),
    ("1e9", 1, 9, EXP),
    ("1E12", 1, 12, EXP),
    ("1e15", 1, 15, EXP),
    ("1E18", 1, 18, EXP),
    ("1e14", 1, 14, EXP),
    ("1e13", 1, 13, EXP),
    ("100.035k", 100035, 0, DEC),
    ("0.001", 1, -3, DEC),
    ("0.0005k", 5, -1, DEC),
    ("0.005", 5, -3, DEC),
    ("0.05", 5, -2, DEC),
    ("0.5", 5, -1, DEC),
    ("0.00050k", 5, -1, DEC),
    ("0.00500", 5, -3, DEC),
    ("0.05000", 5, -2, DEC),
    ("0.50000", 5, -1, DEC),
    ("0.5e0", 5, -1, EXP),
    ("0.5e-1", 5, -2, EXP),
    ("0.5e-2", 5, -3, EXP),
    ("10.035M", 10035, 3, DEC),
    ("1.2e3", 12, 2, EXP),
    ("1.3E+6", 13, 5, EXP),
    ("1.40e9", 14, 8, EXP),
    ("1.53E12", 153, 10, EXP),
    ("1.6e15", 16, 14, EXP),
    ("1.7E18", 17, 17, EXP),
    ("9.01", 901, -2, DEC),
    ("8.1k", 81, 2, DEC),
    ("7.123456M", 7123456, 0, DEC),
    ("6.987654321G", 6987654321, 0, DEC),
    ("5.444T", 5444, 9, DEC),
    ("40.1T", 401, 11, DEC),
    ("300.2T", 3002, 11, DEC),
    ("2.5P", 25, 14, DEC),
    ("1.01E", 101, 16, DEC),
    ("3.001n", 4, -9, DEC),
    ("1.1E-9", 2, -9, EXP),
    ("0.0000000001", 1, -9, DEC),
    ("0.0000000005", 1, -9, DEC),
    ("0.00000000050", 1, -9, DEC),
    ("0.5e-9", 1, -9, EXP),
    ("0.9n", 1, -9, DEC),
    ("0.00000012345", 124, -9, DEC),
    ("0.00000012354", 124, -9, DEC),
    ("9Ei", MAXI64, 0, BIN),
    ("9223372036854775807Ki", MAXI64, 0, BIN),
    ("12E", 12, 18, DEC),
    ("100.035Ki", 10243584, -2, BIN),
    ("0.5Mi", 512 * 1024, 0, BIN),
    ("0.05Gi", 536870912, -1, BIN),
    ("0.025Ti", 274877906944, -1, BIN),
    ("0.000000000001Ki", 2, -9, DEC),
    (".001", 1, -3, DEC),
    (".0001k", 100, -3, DEC),
    ("1.", 1, 0, DEC),
    ("1.G", 1, 9, DEC),
]


@pytest.mark.parametrize("s,m,e,fmt", PARSE)
@pytest.mark.parametrize("sign", ["", "-", "+"])
def test_parse(s, m, e, fmt, sign):
    q = parse_quantity(sign + s)
    want = Quantity(-m if sign == "-" else m, e)
    assert q == want and q.cmp(want) == 0
    assert q.format == fmt


@pytest.mark.parametrize(
    "s,err",
    [
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        ("1K", ERR_SUFFIX),
        ("Non-Numeric", ERR_FORMAT_WRONG),
        (True, ERR_FORMAT_WRONG),
        (".e-20", ERR_NUMERIC),
    ],
)
def test_parse_errors(s, err):
    with pytest.raises(ValueError) as e:
        parse_quantity(s)
    assert str(e.value) == err


def test_error_text_is_upstreams():
    assert (
        ERR_FORMAT_WRONG
        == "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


# TestQuantityString: (mantissa, exponent, format) -> canonical, and an alternate spelling
STRING = [
    (1024**3, 0, BIN, "1Gi", "1024Mi"),
    (300 * 1024**2, 0, BIN, "300Mi", "307200Ki"),
    (6 * 1024, 0, BIN, "6Ki", ""),
    (1001 * 1024**3, 0, BIN, "1001Gi", "1025024Mi"),
    (1024**4, 0, BIN, "1Ti", "1024Gi"),
    (5, 0, BIN, "5", "5000m"),
    (500, -3, BIN, "500m", "0.5"),
    (1, 9, DEC, "1G", "1000M"),
    (1000, 6, DEC, "1G", "0.001T"),
    (1000000, 3, DEC, "1G", ""),
    (1000000000, 0, DEC, "1G", ""),
    (1, -3, DEC, "1m", "1000u"),
    (80, -3, DEC, "80m", ""),
    (1080, -3, DEC, "1080m", "1.08"),
    (108, -2, DEC, "1080m", "1080000000n"),
    (10800, -4, DEC, "1080m", ""),
    (300, 6, DEC, "300M", ""),
    (1, 12, DEC, "1T", ""),
    (1234567, 6, DEC, "1234567M", ""),
    (1234567, -3, BIN, "1234567m", ""),
    (3, 3, DEC, "3k", ""),
    (1025, 0, BIN, "1025", ""),
    (0, 0, DEC, "0", ""),
    (0, 0, BIN, "0", ""),
    (1, 9, EXP, "1e9", ".001e12"),
    (1, -3, EXP, "1e-3", "0.001e0"),
    (1, -9, EXP, "1e-9", "1000e-12"),
    (80, -3, EXP, "80e-3", ""),
    (300, 6, EXP, "300e6", ""),
    (1, 12, EXP, "1e12", ""),
    (1, 3, EXP, "1e3", ""),
    (3, 3, EXP, "3e3", ""),
    (0, 0, EXP, "0", "00"),
    (1, -9, DEC, "1n", ""),
    (80, -9, DEC, "80n", ""),
    (1080, -9, DEC, "1080n", ""),
    (108, -8, DEC, "1080n", ""),
    (10800, -10, DEC, "1080n", ""),
    (1, -6, DEC, "1u", ""),
    (80, -6, DEC, "80u", ""),
    (1080, -6, DEC, "1080u", ""),
]


@pytest.mark.parametrize("m,e,fmt,expect,alternate", STRING)
def test_string(m, e, fmt, expect, alternate):
    assert Quantity(m, e, fmt).canonical() == expect
    assert parse_quantity(expect).canonical() == expect
    if m:
        assert Quantity(-m, e, fmt).canonical() == "-" + expect
    if alternate:
        assert canonicalize(alternate) == expect


@pytest.mark.parametrize(
    "s,expect",
    [
        # TestQuantityParseEmit
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        # brief examples and everyday values
        ("1.5Gi", "1536Mi"),
        ("1536Mi", "1536Mi"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1e3", "1e3"),
        ("100M", "100M"),
        ("100m", "100m"),
        ("250m", "250m"),
        ("1500m", "1500m"),
        ("2000m", "2"),
        ("0.1", "100m"),
        ("1.5", "1500m"),
        ("128974848", "128974848"),
        ("129e6", "129e6"),
        ("129M", "129M"),
        ("123Mi", "123Mi"),
        ("2048Ki", "2Mi"),
        ("3072Ki", "3Mi"),
        ("1000Ki", "1000Ki"),
        ("0.5Gi", "512Mi"),
        ("1000", "1k"),
        ("1024", "1024"),
        ("8Gi", "8Gi"),
        ("16Gi", "16Gi"),
        ("40Gi", "40Gi"),
        ("80G", "80G"),
        # kept verbatim because upstream's parse already considered them canonical
        ("+1Gi", "+1Gi"),
        ("01", "01"),
        ("1E3", "1E3"),
        ("+100m", "+100m"),
        # TestParseQuantity (big numbers)
        ("999999999999999999.1", "999999999999999999100m"),
        ("1000000000000000000", "1E"),
        ("1.0E", "1E"),
        ("9999999999999999999", "9999999999999999999"),
        ("10000000000000000000", "10E"),
        ("10000000000000000000000m", "10E"),
        ("1.0000000000000000001E", "1000000000000000000100m"),
        ("9223372036854775808.1", "9223372036854775808100m"),
        ("-9223372036854775809", "-9223372036854775809"),
        ("-10.000000000000000001E", "-10000000000000000001"),
        # upstream drops a DecimalSI suffix beyond E (no suffix exists for 10^21)
        ("1000E", "1"),
        ("9Ei", "9223372036854775807"),
        # JSON numbers
        (1, "1"),
        (0, "0"),
        (1.5, "1500m"),
        (2.0, "2"),
        (1024, "1024"),
        (1e-05, "10e-6"),
    ],
)
def test_canonicalize(s, expect):
    assert canonicalize(s) == expect


@pytest.mark.parametrize(
    "s", ["1Ki", "1Mi", "1Gi", "1024Mi", "1000M", ".001Ki", ".000001Ki", ".000000001Ki", ".000000000001Ki"]
)
def test_negative_emit(s):
    assert canonicalize("-" + s) == "-" + canonicalize(s)


def test_zero_never_negative():
    assert canonicalize("-0") == "0"
    assert canonicalize("-0Ki") == "0"
    assert str(parse_quantity("1") - parse_quantity("1")) == "0"


@pytest.mark.parametrize(
    "x,y,want",
    [
        ("0", "0", 0),
        ("100m", "50m", 1),
        ("50m", "100m", -1),
        ("10000T", "100Gi", 1),
        ("1Gi", "1024Mi", 0),
        ("1k", "1e3", 0),
        ("-1", "1m", -1),
        ("1e1000", "1e999", 1),
        ("999", "1k", -1),
    ],
)
def test_cmp(x, y, want):
    a, b = parse_quantity(x), parse_quantity(y)
    assert a.cmp(b) == want and b.cmp(a) == -want
    assert (a < b) == (want < 0) and (a > b) == (want > 0) and (a == b) == (want == 0)


def test_add_sub_formats():
    # TestAdd / TestSub: the left operand's format wins unless it is zero
    assert (Quantity(10) + Quantity(1, 1)) == Quantity(20)
    assert (Quantity(10) + Quantity(1, 0, BIN)).format == DEC
    assert (Quantity(10, 0, BIN) + Quantity(1)).format == BIN
    assert (Quantity(0) + Quantity(50)).canonical() == "50"
    assert (Quantity(10) - Quantity(1, 1)).is_zero()
    assert (Quantity(10, 0, BIN) - Quantity(1)).format == BIN
    assert (Quantity(0) - Quantity(50)) == Quantity(-50)
    # TestQuantityAddZeroPreservesSuffix / SubZero
    for s in ("100m", "1Gi"):
        v = parse_quantity(s)
        assert str(v + parse_quantity("0")) == s
        assert str(parse_quantity("0") + v) == s
        assert str(v - parse_quantity("0")) == s
        assert str(parse_quantity("0") - v) == "-" + s
    assert str(parse_quantity("1Gi") + parse_quantity("512Mi")) == "1536Mi"
    assert str(parse_quantity("100m") + parse_quantity("900m")) == "1"
    assert str(sum([parse_quantity("1Gi"), parse_quantity("1Gi")])) == "2Gi"


@pytest.mark.parametrize(
    "q,n,want",
    [
        (Quantity(10), 10, Quantity(100)),
        (Quantity(10, 0, BIN), -1, Quantity(-10)),
        (Quantity(50), 0, Quantity(0)),
        (Quantity(-50), -50, Quantity(2500)),
        (Quantity(MAXI64), 2, Quantity(2 * MAXI64)),
    ],
)
def test_mul(q, n, want):
    assert q * n == want and n * q == want
    assert (q * n).format == q.format


def test_mul_keeps_suffix():
    assert str(parse_quantity("2Gi") * 3) == "6Gi"
    assert str(parse_quantity("250m") * 4) == "1"


@pytest.mark.parametrize(
    "s,value,milli",
    [
        ("1", 1, 1000),
        ("1m", 1, 1),
        ("1500m", 2, 1500),
        ("0.1m", 1, 1),
        ("1Ki", 1024, 1024000),
        ("-1.5", -2, -1500),
        ("1n", 1, 1),
        ("0", 0, 0),
        ("2.0001", 3, 2001),
        ("1e3", 1000, 1000000),
    ],
)
def test_value_rounds_up(s, value, milli):
    q = parse_quantity(s)
    assert (q.value(), q.milli_value()) == (value, milli)


@pytest.mark.parametrize(
    "value,fmt,expect",
    [
        (1, DEC, "1"),
        (1000, DEC, "1k"),
        (1234000, DEC, "1234k"),
        (1024, BIN, "1Ki"),
        (1000000, "bogus", "1e6"),
        (1024 * 1024, BIN, "1Mi"),
    ],
)
def test_from_int(value, fmt, expect):
    # TestNewSet
    q = Quantity.from_int(value, fmt)
    assert str(q) == expect
    assert parse_quantity(str(q)).value() == value


@pytest.mark.parametrize(
    "value,fmt,expect",
    [
        (1, DEC, "1m"),
        (1000, DEC, "1"),
        (1234000, DEC, "1234"),
        (1024, BIN, "1024m"),
        (1000000, "bogus", "1e3"),
        (1024 * 1024, BIN, "1048576m"),
    ],
)
def test_from_milli(value, fmt, expect):
    # TestMilliNewSet
    assert str(Quantity.from_milli(value, fmt)) == expect


@pytest.mark.parametrize(
    "value,scale,expect",
    [
        (1, -9, "1n"),
        (1000, -9, "1u"),
        (1, -6, "1u"),
        (1000, -6, "1m"),
        (1, -3, "1m"),
        (1000, -3, "1"),
        (1, 0, "1"),
        (0, -9, "0"),
    ],
)
def test_from_scaled(value, scale, expect):
    # TestNewScaledSet
    q = Quantity.from_scaled(value, scale)
    assert str(q) == expect
    assert parse_quantity(expect).scaled_value(scale) == value


@pytest.mark.parametrize(
    "frm,to,want",
    [(-9, -9, 1), (-9, -6, 1), (-9, 0, 1), (-6, -9, 1000), (-3, -6, 1000), (0, -9, 10**9), (0, 0, 1), (2, -2, 10000)],
)
def test_scaled_value(frm, to, want):
    assert Quantity.from_scaled(1, frm).scaled_value(to) == want


def test_huge_exponent_is_cheap():
    q = parse_quantity("1e1000000000")
    assert q.canonical() == "10e999999999"
    assert q > parse_quantity("1E")
    assert parse_quantity("1e-1000000000").canonical() == "1e-9"


def test_hash_and_float():
    assert hash(parse_quantity("1Gi")) == hash(parse_quantity("1024Mi"))
    assert float(parse_quantity("1500m")) == 1.5
