"""The conformance runner's own parts, on inline data (no cel-spec files needed): the
text-format parser, the Value/Type conversions, and the judging rules."""

from __future__ import annotations

import math

import pytest

from . import runner, textproto
from .runner import Case, Outcome
from .values import (
    Duration,
    Map,
    ProtoRequired,
    Timestamp,
    TypeValue,
    UInt,
    equal,
    from_type,
    from_value,
    spell,
)

# ---------------------------------------------------------------- text format


def test_messages_fields_and_comments() -> None:
    m = textproto.parse("""
        # a comment
        name: "basic"  # trailing comment
        section {
          name: "s1"
          test: { name: "a", expr: "1" }
          test < name: "b"; expr: "2" >
        }
        section: { name: "s2" }
    """)
    assert m.str("name") == "basic"
    s1, s2 = m.all("section")
    assert [t.str("name") for t in s1.all("test")] == ["a", "b"]
    assert [t.str("expr") for t in s1.all("test")] == ["1", "2"]
    assert s2.str("name") == "s2" and not s2.has("test")


def test_scalars() -> None:
    m = textproto.parse("""
        a: -9223372036854775808  b: 18446744073709551615  c: 0x1F  d: 010
        e: 1.38e-23  f: -0.0  g: inf  h: -inf  i: nan  j: 2.5f  k: 1e12  l: .5
        m: true  n: INT64  o: -Infinity
    """)
    assert m.get("a") == -(2**63) and m.get("b") == 2**64 - 1
    assert m.get("c") == 31 and m.get("d") == 8
    assert m.get("e") == 1.38e-23 and math.copysign(1, m.get("f")) == -1
    assert m.get("g") == math.inf and m.get("h") == -math.inf and math.isnan(m.get("i"))
    assert m.get("j") == 2.5 and m.get("k") == 1e12 and m.get("l") == 0.5
    assert isinstance(m.get("m"), textproto.Ident) and m.get("m") == "true"
    assert m.get("n") == "INT64" and m.get("o") == -math.inf


def test_string_escapes_and_concatenation() -> None:
    m = textproto.parse(r"""
        a: "\a\b\f\n\r\t\v\\\'\"\?"
        b: '\000\012\377\x41\X4a'
        c: "\u00e9\U0001F600"
        d: "ab" 'cd'
          "ef"
        e: "é"
    """)
    assert m.get("a") == b"\a\b\f\n\r\t\v\\'\"?"
    assert m.get("b") == b"\x00\n\xffAJ"
    assert m.str("c") == "é\U0001f600"
    assert m.get("d") == b"abcdef"
    assert m.get("e") == "é".encode()


def test_lists_and_expanded_any_names() -> None:
    m = textproto.parse("""
        v: [1, 2, 3]
        w: []
        obj { [type.googleapis.com/google.protobuf.Duration] { seconds: 2 nanos: 5 } }
        [ext.field]: 7
    """)
    assert m.all("v") == [1, 2, 3] and m.all("w") == []
    d = m.get("obj").get("[type.googleapis.com/google.protobuf.Duration]")
    assert d.get("seconds") == 2 and d.get("nanos") == 5
    assert m.get("[ext.field]") == 7


@pytest.mark.parametrize("text", ['a: "x', "a {", "a: }", r'a: "\q"', "a 1", "a: [1 2]", "a: @"])
def test_errors(text: str) -> None:
    with pytest.raises(textproto.TextFormatError):
        textproto.parse(text)


# ---------------------------------------------------------------- values and types


def _value(text: str) -> object:
    return from_value(textproto.parse(text))


def test_values() -> None:
    assert _value("int64_value: 1") == 1 and type(_value("int64_value: 1")) is int
    assert type(_value("uint64_value: 1")) is UInt
    assert type(_value("double_value: 1")) is float
    assert _value("bool_value: true") is True
    assert _value("null_value: NULL_VALUE") is None
    assert _value(r'bytes_value: "\377"') == b"\xff"
    assert _value('string_value: "\\303\\277"') == "ÿ"
    assert _value('type_value: "int"') == TypeValue("int")
    lst = _value("list_value { values { int64_value: 1 } values { string_value: 'a' } }")
    assert lst == [1, "a"]
    mp = _value(
        "map_value { entries { key { int64_value: 1 } value { bool_value: true } } "
        "entries { key { uint64_value: 1 } value { bool_value: false } } }"
    )
    assert isinstance(mp, Map) and len(mp.pairs) == 2
    ts = _value("object_value { [type.googleapis.com/google.protobuf.Timestamp] { seconds: 9 } }")
    assert ts == Timestamp(9, 0)
    with pytest.raises(ProtoRequired):
        _value("object_value { [type.googleapis.com/cel.expr.conformance.proto3.TestAllTypes] {} }")


def test_exact_equality() -> None:
    assert equal(1, 1) and not equal(1, UInt(1)) and not equal(1, 1.0) and not equal(True, 1)
    assert equal(math.nan, math.nan)
    assert equal([1, "a"], [1, "a"]) and not equal([1], [1.0])
    assert equal(Map([(1, "a"), ("b", 2)]), Map([("b", 2), (1, "a")]))
    assert not equal(Map([(1, "a")]), Map([(UInt(1), "a")]))


def test_types() -> None:
    t = from_type(
        textproto.parse("map_type { key_type { primitive: STRING } value_type { list_type { elem_type { dyn {} } } } }")
    )
    assert t == ("map", "string", ("list", "dyn")) and spell(t) == "map(string, list(dyn))"
    opt = from_type(textproto.parse("abstract_type { name: 'optional_type' parameter_types { primitive: INT64 } }"))
    assert spell(opt) == "optional_type(int)"
    assert spell(from_type(textproto.parse("type { primitive: BOOL }"))) == "type(bool)"
    assert spell(from_type(textproto.parse("null {}"))) == "null_type"
    assert spell(from_type(textproto.parse("well_known: DURATION"))) == "google.protobuf.Duration"
    with pytest.raises(ProtoRequired):
        from_type(textproto.parse("message_type: 'cel.expr.conformance.proto3.TestAllTypes'"))


# ---------------------------------------------------------------- judging


class Fixed:
    name = "fixed"
    reports_types = True

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def run(self, case: Case) -> Outcome:
        return self.outcome


def _case(body: str) -> Case:
    return runner._case("f", "s", textproto.parse(body))


def _judge(body: str, outcome: Outcome) -> runner.Result:
    return runner.judge(_case(body), Fixed(outcome))


def test_default_matcher_is_true() -> None:
    assert _judge("expr: 'x'", Outcome("ok", True)).status == "pass"
    assert _judge("expr: 'x'", Outcome("ok", False)).kind == "wrong value"


def test_types_must_match_exactly() -> None:
    r = _judge("expr: '1' value { int64_value: 1 }", Outcome("ok", UInt(1)))
    assert (r.status, r.kind) == ("fail", "wrong numeric type")
    assert _judge("expr: '1' value { double_value: 1 }", Outcome("ok", 1.0)).status == "pass"


def test_parse_and_check_errors() -> None:
    assert _judge("expr: '1 +'", Outcome("parse", error="Syntax error")).kind.startswith("parse error")
    r = _judge("expr: 'x' eval_error { errors { message: 'no' } }", Outcome("check", error="undeclared"))
    assert r.status == "fail" and r.kind.startswith("check error")
    r = _judge(
        "expr: 'x' disable_check: true eval_error { errors { message: 'no' } }", Outcome("check", error="undeclared")
    )
    assert r.status == "pass"
    r = _judge("expr: 'x' disable_check: true value { int64_value: 1 }", Outcome("check", error="e"))
    assert r.kind.startswith("check error (disable_check)")


def test_eval_errors() -> None:
    body = "expr: '1/0' eval_error { errors { message: 'division by zero' } }"
    assert _judge(body, Outcome("eval", error="division by zero")).status == "pass"
    assert _judge(body, Outcome("ok", 1)).kind == "no error"
    body = "expr: '1/0' any_eval_errors { errors { errors { message: 'a' } } }"
    assert _judge(body, Outcome("eval", error="x")).status == "pass"


def test_typed_result_and_check_only() -> None:
    body = "expr: '[]' typed_result { result { list_value {} } deduced_type { list_type { elem_type { dyn {} } } } }"
    assert _judge(body, Outcome("ok", [], type="list(dyn)")).status == "pass"
    assert _judge(body, Outcome("ok", [], type="list(int)")).kind == "deduced type differs"
    body = "expr: 'x' check_only: true typed_result { deduced_type { primitive: INT64 } }"
    assert _judge(body, Outcome("ok", type="int")).status == "pass"


def test_bindings_and_decls() -> None:
    c = _case(
        "expr: 'x' type_env { name: 'x' ident { type { primitive: UINT64 } } } "
        "bindings { key: 'x' value { value { uint64_value: 3 } } } value { uint64_value: 3 }"
    )
    assert c.decls == {"x": "uint"} and type(c.bindings["x"]) is UInt and not c.skip


def test_proto_tests_are_skipped_and_named() -> None:
    for body in (
        "expr: 'TestAllTypes{}'",
        "expr: 'x' container: 'cel.expr.conformance.proto3'",
        "expr: 'google.protobuf.Int32Value{value: 1}'",
        "expr: 'x' type_env { name: 'x' ident { type { message_type: 'a.B' } } }",
    ):
        r = runner.judge(_case(body), Fixed(Outcome("ok", True)))
        assert r.status == "skip" and r.detail
    # Timestamp and Duration are CEL types, not skipped
    assert not _case("expr: 'google.protobuf.Duration == type(duration(\"1s\"))'").skip


def test_what_the_npm_writer_writes(tmp_path) -> None:
    """scripts/cel_spec_npm/to_textproto.cjs writes every non-ASCII byte of a string as an
    octal escape, negative zero as -0.0, NaN and infinities by name and Any expanded."""
    (tmp_path / "f.textproto").write_text(
        'name: "f"\nsection {\n  name: "s"\n  test {\n    name: "t"\n    expr: "\'\\303\\251\\"\\\\\'"\n'
        '    value {\n      string_value: "\\303\\251\\"\\\\"\n    }\n  }\n'
        '  test {\n    name: "z"\n    expr: "-0.0"\n    value {\n      double_value: -0.0\n    }\n  }\n'
        '  test {\n    name: "n"\n    expr: "x"\n    bindings {\n      key: "x"\n      value {\n'
        "        value {\n          list_value {\n            values {\n              double_value: nan\n"
        "            }\n            values {\n              double_value: -inf\n            }\n"
        "          }\n        }\n      }\n    }\n    value {\n      object_value {\n"
        "        [type.googleapis.com/google.protobuf.Duration] {\n          seconds: 1\n        }\n"
        "      }\n    }\n  }\n}\n"
    )
    (tmp_path / "ABSENT").write_text("g\n")
    (tmp_path / "SOURCE").write_text("npm x@1 (cel-spec v1)\n")
    t, z, n = runner.load_all(tmp_path)["f"]
    assert t.expr == "'é\"\\'" and t.expected == 'é"\\'
    assert z.expected == 0.0 and math.copysign(1, z.expected) == -1
    assert math.isnan(n.bindings["x"][0]) and n.bindings["x"][1] == -math.inf
    assert n.expected == Duration(1, 0)
    assert runner.absent(tmp_path) == ["g"] and runner.source(tmp_path) == "npm x@1 (cel-spec v1)"
