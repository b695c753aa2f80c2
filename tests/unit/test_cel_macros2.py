"""Two-variable comprehensions (cel-go ext.TwoVarComprehensions: all, exists, existsOne,
transformList, transformMap, transformMapEntry): cases ported from google/cel-spec's
tests/simple/testdata/macros2.textproto and cel-go's ext/comprehensions_test.go, written
out here because CI has no cel-spec data."""

from __future__ import annotations

import pytest

from mockkube.cel import engine


def ev(expr: str) -> object:
    return engine.compile_with(expr, (), kubernetes=False).evaluate({})


VALUES = [
    ("[1, 2, 3].exists(i, v, i > -1 && v > 0)", True),  # exists
    ("[1, 2, 3].exists(i, v, i == 1 && v == 2)", True),  # exists
    ("[1, 2, 3].exists(i, v, i > 2 && v > 3)", False),  # exists
    ("[1, 'foo', 3].exists(i, v, i == 1 && v != '1')", True),  # exists
    ("[1, 'foo', 3].exists(i, v, i == 3 || v == '10')", False),  # exists
    ("[].exists(i, v, i == 0 || v == 2)", False),  # exists
    ("{'key1':1, 'key2':2}.exists(k, v, k == 'key2' && v == 2)", True),  # exists
    ("!{'key1':1, 'key2':2}.exists(k, v, k == 'key3' || v == 3)", True),  # exists
    ("{'key':1, 1:21}.exists(k, v, k != 2 && v != 22)", True),  # exists
    ("!{'key':1, 1:42}.exists(k, v, k == 2 && v == 43)", True),  # exists
    ("[1, 2, 3].all(i, v, i > -1 && v > 0)", True),  # all
    ("[1, 2, 3].all(i, v, i == 1 && v == 2)", False),  # all
    ("[1, 2, 3].all(i, v, i == 3 || v == 4)", False),  # all
    ("[1, 'foo', 3].all(i, v, i == 0 || v == 1)", False),  # all
    ("[0, 'foo', 3].all(i, v, v % 2 == i)", False),  # all
    ("[1, 2, 3].all(i, v, 6 / (2 - v) == i)", False),  # all
    ("[].all(i, v, i > -1 || v > 0)", True),  # all
    ("{'key1':1, 'key2':2}.all(k, v, k == 'key2' && v == 2)", False),  # all
    ("[].existsOne(i, v, i == 3 || v == 7)", False),  # existsOne
    ("[7].existsOne(i, v, i == 0 && v == 7)", True),  # existsOne
    ("[8].existsOne(i, v, i == 0 && v == 7)", False),  # existsOne
    ("[1, 2, 3].existsOne(i, v, i > 2 || v > 3)", False),  # existsOne
    ("[5, 7, 8].existsOne(i, v, v % 5 == i)", True),  # existsOne
    ("[0, 1, 2, 3, 4].existsOne(i, v, v % 2 == i)", False),  # existsOne
    ("['foal', 'foo', 'four'].existsOne(i, v, i > -1 && v.startsWith('fo'))", False),  # existsOne
    ("{6: 'six', 7: 'seven', 8: 'eight'}.existsOne(k, v, k % 5 == 2 && v == 'seven')", True),  # existsOne
    ("[].transformList(i, v, i / v)", []),  # transformList
    ("[].transformList(i, v, i > v, i / v)", []),  # transformList
    ("[3].transformList(i, v, v * v + i)", [9]),  # transformList
    ("[3].transformList(i, v, i == 0 && v == 3, v * v + i)", [9]),  # transformList
    ("[2, 4, 6].transformList(i, v, v / 2 + i)", [1, 3, 5]),  # transformList
    ("[2, 4, 6].transformList(i, v, i != 1 && v != 4, v / 2 + i)", [1, 5]),  # transformList
    ("{}.transformMap(k, v, k + v)", {}),  # transformMap
    ("{}.transformMap(k, v, k == 'foo' && v == 'bar', k + v)", {}),  # transformMap
    ("{'foo': 'bar'}.transformMap(k, v, k + v)", {"foo": "foobar"}),  # transformMap
    ("{'foo': 'bar'}.transformMap(k, v, k == 'foo' && v == 'bar', k + v)", {"foo": "foobar"}),  # transformMap
    (
        "{'foo': 'bar', 'baz': 'bux', 'hello': 'world'}.transformMap(k, v, k + v)",
        {"foo": "foobar", "baz": "bazbux", "hello": "helloworld"},
    ),  # transformMap
    (
        "{'foo': 'bar', 'baz': 'bux', 'hello': 'world'}.transformMap(k, v, k != 'baz' && v != 'bux', k + v)",
        {"foo": "foobar", "hello": "helloworld"},
    ),  # transformMap
]
ERRORS = [
    ("[1, 2, 3].exists(i, v, v / i == 17)", "divide by zero"),  # exists
    ("[0, 'foo', 5].all(i, v, v % 3 == i)", "no_such_overload"),  # all
    ("[1, 2, 3].all(i, v, v / i != 17)", "divide by zero"),  # all
    ("[3, 2, 1, 0].existsOne(i, v, v / i > 1)", "divide by zero"),  # existsOne
    ("[2, 1, 0].transformList(i, v, v / i)", "divide by zero"),  # transformList
    ("[2, 1, 0].transformList(i, v, v / i > 0, v)", "divide by zero"),  # transformList
    ("{'foo': 2, 'bar': 1, 'baz': 0}.transformMap(k, v, 4 / v)", "divide by zero"),  # transformMap
    (
        "{'foo': 2, 'bar': 1, 'baz': 0}.transformMap(k, v, k == 'baz' && 4 / v == 0, v)",
        "divide by zero",
    ),  # transformMap
]

# cel-go ext/comprehensions_test.go: transformMapEntry, and the map forms of the others
VALUES += [
    ("{'greeting': 'hello'}.transformMapEntry(k, v, {v: k}) == {'hello': 'greeting'}", True),
    ("[1, 2, 3].transformMapEntry(i, v, i > 0, {v: i}) == {2: 1, 3: 2}", True),
    ("{'a': 1, 'b': 2}.transformList(k, v, k + string(v)) == ['a1', 'b2']", True),
    ("[10, 20].transformMap(i, v, v + i) == {0: 10, 1: 21}", True),
    ("{'a': 1, 'b': 2}.all(k, v, v > 0 && k.size() == 1)", True),
    ("[1, 2].existsOne(i, v, v == 2)", True),
]
ERRORS += [
    ("[1, 1].transformMapEntry(i, v, {v: i})", "insert failed: key 1 already exists"),
]


@pytest.mark.parametrize(("expr", "want"), VALUES)
def test_value(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and engine.cel_equals(got, want)


@pytest.mark.parametrize(("expr", "want"), ERRORS)
def test_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        ev(expr)
    assert (
        want.replace("divide by zero", "division by zero").replace("no_such_overload", "no such overload")
        in exc.value.message
    )


def test_checker() -> None:
    t = engine.compile_with("{'a': 1}.transformMap(k, v, double(v) * 2.0)", ()).output_type
    assert engine.type_name(t) == "map(string, double)"
    t = engine.compile_with("[1].transformList(i, v, string(v))", ()).output_type
    assert engine.type_name(t) == "list(string)"
    with pytest.raises(engine.CELError, match="duplicate variable name: x"):
        engine.compile_with("[1].all(x, x, x > 0)", ())
    # one-variable macros keep working, and map(x, filter, expr) is not a two-variable form
    assert ev("[1, 2, 3].map(x, x > 1, x * 2)") == [4, 6]
    assert ev("[1, 2, 3].existsOne(x, x == 2)") is True
