"""The CEL strings extension (cel-go ext.Strings as Kubernetes enables it): cases ported
from google/cel-spec's tests/simple/testdata/string_ext.textproto, written out here
because CI has no cel-spec data (expression, expected value or error text)."""

from __future__ import annotations

import pytest

from mockkube.cel import engine


def ev(expr: str) -> object:
    return engine.compile_with(expr, (), kubernetes=False).evaluate({})


VALUES = [
    ("'tacocat'.charAt(3)", "o"),  # char_at
    ("'tacocat'.charAt(7)", ""),  # char_at
    ("'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'", True),  # char_at
    ("'tacocat'.indexOf('')", 0),  # index_of
    ("'tacocat'.indexOf('ac')", 1),  # index_of
    ("'tacocat'.indexOf('none') == -1", True),  # index_of
    ("'tacocat'.indexOf('', 3) == 3", True),  # index_of
    ("'tacocat'.indexOf('a', 3) == 5", True),  # index_of
    ("'tacocat'.indexOf('at', 3) == 5", True),  # index_of
    ("'ta©o©αT'.indexOf('©') == 2", True),  # index_of
    ("'ta©o©αT'.indexOf('©', 3) == 4", True),  # index_of
    ("'ta©o©αT'.indexOf('©αT', 3) == 4", True),  # index_of
    ("'ta©o©αT'.indexOf('©α', 5) == -1", True),  # index_of
    ("'ijk'.indexOf('k') == 2", True),  # index_of
    ("'hello wello'.indexOf('hello wello') == 0", True),  # index_of
    ("'hello wello'.indexOf('ello', 6) == 7", True),  # index_of
    ("'hello wello'.indexOf('elbo room!!') == -1", True),  # index_of
    ("''.lastIndexOf('@@') == -1", True),  # last_index_of
    ("'tacocat'.lastIndexOf('') == 7", True),  # last_index_of
    ("'tacocat'.lastIndexOf('at') == 5", True),  # last_index_of
    ("'tacocat'.lastIndexOf('none') == -1", True),  # last_index_of
    ("'tacocat'.lastIndexOf('', 3) == 3", True),  # last_index_of
    ("'tacocat'.lastIndexOf('a', 3) == 1", True),  # last_index_of
    ("'ta©o©αT'.lastIndexOf('©') == 4", True),  # last_index_of
    ("'ta©o©αT'.lastIndexOf('©', 3) == 2", True),  # last_index_of
    ("'ta©o©αT'.lastIndexOf('©α', 4) == 4", True),  # last_index_of
    ("'hello wello'.lastIndexOf('ello', 6) == 1", True),  # last_index_of
    ("'hello wello'.lastIndexOf('low') == -1", True),  # last_index_of
    ("'hello wello'.lastIndexOf('elbo room!!') == -1", True),  # last_index_of
    ("'hello wello'.lastIndexOf('hello wello') == 0", True),  # last_index_of
    ("'bananananana'.lastIndexOf('nana', 7) == 6", True),  # last_index_of
    ("'TacoCat'.lowerAscii() == 'tacocat'", True),  # ascii_casing
    ("'TacoCÆt'.lowerAscii() == 'tacocÆt'", True),  # ascii_casing
    ("'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'", True),  # ascii_casing
    ("'tacoCat'.upperAscii() == 'TACOCAT'", True),  # ascii_casing
    ("'tacoCαt'.upperAscii() == 'TACOCαT'", True),  # ascii_casing
    ("'TacoCÆt Xii'.upperAscii() == 'TACOCÆT XII'", True),  # ascii_casing
    ("'12 days 12 hours'.replace('{0}', '2') == '12 days 12 hours'", True),  # replace
    ("'{0} days {0} hours'.replace('{0}', '2') == '2 days 2 hours'", True),  # replace
    ("'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23') == '2 days 23 hours'", True),  # replace
    ("'1 ©αT taco'.replace('αT', 'o©α') == '1 ©o©α taco'", True),  # replace
    ("'hello world'.split(' ') == ['hello', 'world']", True),  # split
    ("'hello world events!'.split(' ', 0) == []", True),  # split
    ("'hello world events!'.split(' ', 1) == ['hello world events!']", True),  # split
    ("'o©o©o©o'.split('©', -1) == ['o', 'o', 'o', 'o']", True),  # split
    ("'tacocat'.substring(4) == 'cat'", True),  # substring
    ("'tacocat'.substring(7) == ''", True),  # substring
    ("'tacocat'.substring(0, 4) == 'taco'", True),  # substring
    ("'tacocat'.substring(4, 4) == ''", True),  # substring
    ("'ta©o©αT'.substring(2, 6) == '©o©α'", True),  # substring
    ("'ta©o©αT'.substring(7, 7) == ''", True),  # substring
    ("' \\f\\n\\r\\t\\vtext  '.trim() == 'text'", True),  # trim
    ("'\\u0085\\u00a0\\u1680text'.trim() == 'text'", True),  # trim
    ("'text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009'.trim() == 'text'", True),  # trim
    ("'\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000'.trim() == 'text'", True),  # trim
    (
        "'\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff'.trim() == '\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff'",
        True,
    ),  # trim
    ("['x', 'y'].join() == 'xy'", True),  # join
    ("['x', 'y'].join('-') == 'x-y'", True),  # join
    ("[].join() == ''", True),  # join
    ("[].join('-') == ''", True),  # join
    ('strings.quote("first\\nsecond") == "\\"first\\\\nsecond\\""', True),  # quote
    ('strings.quote("bell\\a") == "\\"bell\\\\a\\""', True),  # quote
    ('strings.quote("\\bbackspace") == "\\"\\\\bbackspace\\""', True),  # quote
    ('strings.quote("\\fform feed") == "\\"\\\\fform feed\\""', True),  # quote
    ('strings.quote("carriage \\r return") == "\\"carriage \\\\r return\\""', True),  # quote
    ('strings.quote("horizontal tab\\t") == "\\"horizontal tab\\\\t\\""', True),  # quote
    ('strings.quote("vertical \\v tab") == "\\"vertical \\\\v tab\\""', True),  # quote
    ('strings.quote("double \\\\\\\\ slash") == "\\"double \\\\\\\\\\\\\\\\ slash\\""', True),  # quote
    (
        'strings.quote("two escape sequences \\\\a\\\\n") == "\\"two escape sequences \\\\\\\\a\\\\\\\\n\\""',
        True,
    ),  # quote
    ('strings.quote("verbatim") == "\\"verbatim\\""', True),  # quote
    ('strings.quote("ends with \\\\") == "\\"ends with \\\\\\\\\\""', True),  # quote
    ('strings.quote("\\\\ starts with") == "\\"\\\\\\\\ starts with\\""', True),  # quote
    ('strings.quote("printable unicode😀") == "\\"printable unicode😀\\""', True),  # quote
    ('strings.quote("mid string \\" quote") == "\\"mid string \\\\\\" quote\\""', True),  # quote
    (
        'strings.quote(\'single-quote with "double quote"\') == "\\"single-quote with \\\\\\"double quote\\\\\\"\\""',
        True,
    ),  # quote
    ('strings.quote("size(\'ÿ\')") == "\\"size(\'ÿ\')\\""', True),  # quote
    ('strings.quote("size(\'πέντε\')") == "\\"size(\'πέντε\')\\""', True),  # quote
    ('strings.quote("завтра") == "\\"завтра\\""', True),  # quote
    ('strings.quote("\\U0001F431\\U0001F600\\U0001F61B")', '"🐱😀😛"'),  # quote
    ('strings.quote("ta©o©αT") == "\\"ta©o©αT\\""', True),  # quote
    ('strings.quote("")', '""'),  # quote
    ('"no substitution".format([])', "no substitution"),  # format
    ('"str is %s and some more".format(["filler"])', "str is filler and some more"),  # format
    ('"%% and also %%".format([])', "% and also %"),  # format
    ('"%%%s%%".format(["text"])', "%text%"),  # format
    ('"%s%%".format(["percent on the right"])', "percent on the right%"),  # format
    ('"%%%s".format(["percent on the left"])', "%percent on the left"),  # format
    (
        '"%d %d %d, %s %s %s, %d %d %d, %s %s %s".format([1, 2, 3, "A", "B", "C", 4, 5, 6, "D", "E", "F"])',
        "1 2 3, A B C, 4 5 6, D E F",
    ),  # format
    ('"%%escaped %s%%".format(["percent"])', "%escaped percent%"),  # format
    ('"%.3f".format([1.2345])', "1.234"),  # format
    ('"this is 5 in binary: %b".format([5])', "this is 5 in binary: 101"),  # format
    ('"unsigned 64 in binary: %b".format([uint(64)])', "unsigned 64 in binary: 1000000"),  # format
    ('"bit set from bool: %b".format([true])', "bit set from bool: 1"),  # format
    ('"%o".format([11])', "13"),  # format
    ('"this is an unsigned octal: %o".format([uint(65535)])', "this is an unsigned octal: 177777"),  # format
    ('"%x is 20 in hexadecimal".format([30])', "1e is 20 in hexadecimal"),  # format
    ('"%X is 20 in hexadecimal".format([30])', "1E is 20 in hexadecimal"),  # format
    ('"%X is 6000 in hexadecimal".format([uint(6000)])', "1770 is 6000 in hexadecimal"),  # format
    ('"%x".format(["Hello world!"])', "48656c6c6f20776f726c6421"),  # format
    ('"%X".format(["Hello world!"])', "48656C6C6F20776F726C6421"),  # format
    ('"%x".format([b"byte string"])', "6279746520737472696e67"),  # format
    ('"%X".format([b"byte string"])', "6279746520737472696E67"),  # format
    ('"%.6e".format([1052.032911275])', "1.052033e+03"),  # format
    ('"%f".format([2.71828])', "2.718280"),  # format
    ('"%f".format([2])', "2.000000"),  # format
    ('"%f".format([3u])', "3.000000"),  # format
    ('"%e".format([2.71828])', "2.718280e+00"),  # format
    ('"%e".format([2])', "2.000000e+00"),  # format
    ('"%e".format([3u])', "3.000000e+00"),  # format
    ('"%e".format([double("NaN")])', "NaN"),  # format
    ('"%e".format([double("Infinity")])', "Infinity"),  # format
    ('"%e".format([double("-Infinity")])', "-Infinity"),  # format
    ('"%d".format([double("NaN")])', "NaN"),  # format
    ('"%d".format([double("Infinity")])', "Infinity"),  # format
    ('"%d".format([double("-Infinity")])', "-Infinity"),  # format
    ('"%f".format([double("NaN")])', "NaN"),  # format
    ('"%f".format([double("Infinity")])', "Infinity"),  # format
    ('"%f".format([double("-Infinity")])', "-Infinity"),  # format
    ('"%d".format([uint(64)])', "64"),  # format
    ('"%s".format([null])', "null"),  # format
    ('"%s".format([999999999999])', "999999999999"),  # format
    ('"%s".format([b"xyz"])', "xyz"),  # format
    ('"%s".format([type("test string")])', "string"),  # format
    ('"%s".format([timestamp("2023-02-03T23:31:20+00:00")])', "2023-02-03T23:31:20Z"),  # format
    ('"%s".format([duration("1h45m47s")])', "6347s"),  # format
    (
        '"%s".format([["abc", 3.14, null, [9, 8, 7, 6], timestamp("2023-02-03T23:31:20Z")]])',
        "[abc, 3.14, null, [9, 8, 7, 6], 2023-02-03T23:31:20Z]",
    ),  # format
    (
        '"%s".format([{"key1": b"xyz", "key5": null, "key2": duration("2h"), "key4": true, "key3": 2.71828}])',
        "{key1: xyz, key2: 7200s, key3: 2.71828, key4: true, key5: null}",
    ),  # format
    ('"%s, %s".format([true, false])', "true, false"),  # format
    ('"%s".format([dyn("a string")])', "a string"),  # format
    ('"%s, %s".format([dyn(32), dyn(56.8)])', "32, 56.8"),  # format
    ('"%d".format([dyn(128)])', "128"),  # format
    ('"%d".format([dyn(256u)])', "256"),  # format
    ('"%x".format([dyn(22)])', "16"),  # format
    ('"%X".format([dyn(26)])', "1A"),  # format
    ('"%x".format([dyn(500u)])', "1f4"),  # format
    ('"%.3f".format([dyn(4.5)])', "4.500"),  # format
    ('"%e".format([dyn(2.71828)])', "2.718280e+00"),  # format
    ('"%s".format([[double("NaN"), double("Infinity"), double("-Infinity")]])', "[NaN, Infinity, -Infinity]"),  # format
    ('"%s".format([dyn(timestamp("2009-11-10T23:00:00Z"))])', "2009-11-10T23:00:00Z"),  # format
    ('"%s".format([dyn(duration("8747s"))])', "8747s"),  # format
    ('"%s".format([dyn([6, 4.2, "a string"])])', "[6, 4.2, a string]"),  # format
    ('"%s".format([{"strKey":"x", 6:duration("422s"), true:42}])', "{6: 422s, strKey: x, true: 42}"),  # format
    ('"%.0f".format([123.000000])', "123"),  # format
    ('"%.0f".format([3.5001])', "4"),  # format
    ('"%.0f".format([3.4999])', "3"),  # format
    ('"%.0f".format([1.5])', "2"),  # format
    ('"%.0f".format([2.5])', "2"),  # format
    ('"%.3f".format([123.4999])', "123.500"),  # format
    ('"%.3f".format([123.4994])', "123.499"),  # format
    ('"%.3f".format([-123.4999])', "-123.500"),  # format
    ('"%.3f".format([-123.4994])', "-123.499"),  # format
    ('"%.5f".format([-1.2])', "-1.20000"),  # format
    ("''.reverse() == ''", True),  # reverse
    ("'☺'.reverse() == '☺'", True),  # reverse
    ("'Ta©oCαt'.reverse() == 'tαCo©aT'", True),  # reverse
]

ERRORS = [
    ("'tacocat'.charAt(30) == ''", "index out of range: 30"),  # value_errors
    ("'tacocat'.indexOf('a', 30) == -1", "index out of range: 30"),  # value_errors
    ("'tacocat'.lastIndexOf('a', -1) == -1", "index out of range: -1"),  # value_errors
    ("'tacocat'.lastIndexOf('a', 30) == -1", "index out of range: 30"),  # value_errors
    ("'tacocat'.substring(40) == 'cat'", "index out of range: 40"),  # value_errors
    ("'tacocat'.substring(-1) == 'cat'", "index out of range: -1"),  # value_errors
    ("'tacocat'.substring(1, 50) == 'cat'", "index out of range: 50"),  # value_errors
    ("'tacocat'.substring(49, 50) == 'cat'", "index out of range: 49"),  # value_errors
    ("'tacocat'.substring(4, 3) == ''", "invalid substring range. start: 4, end: 3"),  # value_errors
    # format_errors
    ('"%a".format([1])', 'could not parse formatting clause: unrecognized formatting clause "a"'),
    ('"%d %d %d".format([0, 1])', "index 2 out of range"),
    (
        '"string is %b".format(["abc"])',
        "error during formatting: only integers and bools can be formatted as binary, was given string",
    ),
    (
        '"%d".format([duration("30m2s")])',
        "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration",
    ),
    (
        '"octal: %o".format(["a string"])',
        "error during formatting: octal clause can only be used on integers, was given string",
    ),
    (
        '"double is %x".format([0.5])',
        "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double",
    ),
    ('"double is %E".format([0.5])', 'could not parse formatting clause: unrecognized formatting clause "E"'),
    (
        '"null: %d".format([null])',
        "error during formatting: decimal clause can only be used on integers, was given null_type",
    ),
    (
        '"null: %e".format([null])',
        "error during formatting: scientific clause can only be used on doubles, was given null_type",
    ),
    (
        '"null: %f".format([null])',
        "error during formatting: fixed-point clause can only be used on doubles, was given null_type",
    ),
]

# type errors are the checker's (cel-spec runs them with checking off)
CHECK_ERRORS = [
    ("42.charAt(2)", "found no matching overload for 'charAt' applied to 'int.(int)'"),
    ("'hello'.charAt(true)", "found no matching overload for 'charAt' applied to 'string.(bool)'"),
    ("'hello'.indexOf('a', 'b')", "found no matching overload for 'indexOf' applied to 'string.(string, string)'"),
    (
        "'hello'.replace('a', 'b', 'c')",
        "found no matching overload for 'replace' applied to 'string.(string, string, string)'",
    ),
    ("'hello'.split('a', 1, 2)", "found no matching overload for 'split' applied to 'string.(string, int, int)'"),
    ("'hello'.substring(1, true)", "found no matching overload for 'substring' applied to 'string.(int, bool)'"),
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


@pytest.mark.parametrize(("expr", "want"), CHECK_ERRORS)
def test_check_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        engine.compile_with(expr, (), kubernetes=False)
    assert want in exc.value.message


def test_kubernetes_shapes() -> None:
    # the forms CRD rules use: ASCII casing leaves other letters alone, format with a list
    assert ev("'ÄbC'.lowerAscii()") == "Äbc"
    assert ev("'%s-%d'.format(['pod', 3])") == "pod-3"
    assert ev("'a,b,c'.split(',', 2)") == ["a", "b,c"]
    assert ev("'  x \\t'.trim()") == "x"
