"""Parsing and resolution details cel-go has: backquoted field names, dotted variable names
(the longest declared prefix wins, comprehension variables shadow), and evaluation with
type checking off (``compile_with(..., checked=False)``, cel-spec's ``disable_check``), where
what the checker would reject fails only when evaluated. Cases ported from google/cel-spec's
tests/simple/testdata (fields, logic, basic, comparisons, parse, namespace)."""

from __future__ import annotations

import pytest

from mockkube.cel import engine


def ev(expr: str, variables: dict | None = None, checked: bool = True, decls: dict | None = None) -> object:
    decls = decls or {k: "dyn" for k in variables or {}}
    return engine.compile_with(expr, tuple(sorted(decls.items())), checked, kubernetes=False).evaluate(
        dict(variables or {})
    )


QUOTED = [
    ("{'/api/v1': true, '/api/v2': false}.`/api/v1`", True),
    ("{'content-type': 'application/json', 'content-length': 145}.`content-type` == 'application/json'", True),
    ("{'foo.txt': 32, 'bar.csv': 1024}.`foo.txt`", 32),
    ("has({'/api/v1': true, '/api/v2': false}.`/api/v3`)", False),
    ("has({'content-type': 'application/json', 'content-length': 145}.`content-type`)", True),
    ("has({'foo.txt': 32, 'bar.csv': 1024}.`foo.txt`)", True),
]

# (expression, expected) with checking off: cel-spec logic, basic, comparisons and parse
UNCHECKED = [
    ("false && 32", False),
    ("32 && false", False),
    ("true || 32", True),
    ("'horses' || true", True),
    ("'horses' && false", False),
    ("1.0 == 1", True),
    ("2u != 2", False),
    ("['one'] == [2, 3]", False),
    ("[1] == [1.0]", True),
    ("true ? 'cows' : 17", "cows"),
    ("x || true", True),
    ("f_unknown(17) || true", True),
    ("a.as() || true", True),
    ("a.while() || true", True),
]


@pytest.mark.parametrize(("expr", "want"), QUOTED)
def test_quoted_fields(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize(("expr", "want"), UNCHECKED)
def test_unchecked(expr: str, want: object) -> None:
    got = ev(expr, checked=False)
    assert type(got) is type(want) and got == want


def test_unchecked_errors_surface_at_evaluation() -> None:
    with pytest.raises(engine.CELError, match="undeclared reference to 'x'"):
        ev("x && true", checked=False)
    with pytest.raises(engine.CELError, match="found no matching overload for '_&&_'"):
        ev("false && 32")  # checked: the checker rejects it


def test_dotted_variable_names() -> None:
    # fields.textproto qualified_identifier_resolution: the longest declared prefix wins
    assert ev("a.b.c", {"a.b.c": "yeah", "a.b": {"c": "oops"}}) == "yeah"
    assert ev("a.b.c", {"a.b": {"c": "yeah"}}) == "yeah"
    # namespace.textproto comprehension_shadowing_selector: y is the comprehension's
    assert ev("[{'z': 0}].exists(y, y.z == 0)", {"y.z": 1}) is True


def test_map_key_types() -> None:
    for expr in ("{3.3: 15.15, 1.0: 5}[1.0]", "{null: false}[null]"):
        with pytest.raises(engine.CELError, match="unsupported"):
            ev(expr, checked=False)


def test_container_resolution() -> None:
    # namespace.textproto: in container "x", y names x.y first; a leading dot skips the container
    decls = {"x.y": "bool", "y": "string"}
    act = {"x.y": True, "y": "root"}
    prog = engine.compile_with("y", tuple(sorted(decls.items())), True, "x")
    assert prog.evaluate(act) is True
    assert engine.compile_with(".y", tuple(sorted(decls.items())), True, "x").evaluate(act) == "root"
    assert engine.compile_with("y", tuple(sorted(decls.items()))).evaluate(act) == "root"
    with pytest.raises(engine.CELError, match="undeclared reference to 'z' \\(in container 'com.example'\\)"):
        engine.compile_with("z", (), True, "com.example")


def test_comprehension_variables_shadow() -> None:
    # namespace.textproto comprehension_shadowing_nesting: the inner y is the inner one
    assert ev("[1].exists(y, [0].exists(y, y == 0))", {"y": 5}) is True
    assert ev("[1].exists(y, y == 1) && y == 5", {"y": 5}) is True
