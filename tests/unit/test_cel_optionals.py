"""CEL optionals as Kubernetes enables them (cel-go's optional library): optional map and
list literal entries (``{?k: v}``, ``[?x]``), ``optMap``/``optFlatMap``, ``has()`` through
optionals, optional chaining. Cases ported from google/cel-spec's
tests/simple/testdata/optionals.textproto, written out here because CI has no cel-spec data."""

from __future__ import annotations

import pytest

from mockkube.cel import engine
from mockkube.cel.engine import UInt, optional_type  # noqa: F401 - UInt appears in the table


def ev(expr: str) -> object:
    return engine.compile_with(expr, (), kubernetes=False).evaluate({})


VALUES = [
    ("optional.of(null).hasValue()", True),  # null
    ("optional.ofNonZeroValue(null).hasValue()", False),  # null_non_zero_value
    ("optional.none().or(optional.none()).orValue(42)", 42),  # none_or_none_or_value
    ("optional.none().optMap(y, y + 1).hasValue()", False),  # none_optMap_hasValue
    ("{}.?key.optFlatMap(k, k.?subkey).hasValue()", False),  # empty_map_optFlatMap_hasValue
    ("{'key': {}}.?key.optFlatMap(k, k.?subkey).hasValue()", False),  # map_empty_submap_optFlatMap_hasValue
    ("{'null_key': dyn(null)}.?null_key.hasValue()", True),  # map_null_entry_hasValue
    ("{true: dyn(0)}[?false].absent.hasValue()", False),  # map_absent_key_absent_field_none
    ("{}.?null_key.invalid.hasValue()", False),  # map_undefined_entry_hasValue
    (
        "{'key': {'subkey': 'subvalue'}}.?key.optFlatMap(k, k.?subkey).value()",
        "subvalue",
    ),  # map_submap_subkey_optFlatMap_value
    ("{'key': {'subkey': ''}}.?key.optFlatMap(k, k.?subkey).value()", ""),  # map_submap_optFlatMap_value
    (
        "{'key': {'subkey': ''}}.?key.optFlatMap(k, optional.ofNonZeroValue(k.subkey)).hasValue()",
        False,
    ),  # map_optindex_optFlatMap_optional_ofNonZeroValue_hasValue
    ("optional.of(42).optMap(y, y + 1).value()", 43),  # optional_of_optMap_value
    (
        "optional.ofNonZeroValue(42).or(optional.of(20)).value() == 42",
        True,
    ),  # optional_ofNonZeroValue_or_optional_value
    ("(has({}.x) ? optional.of({}.x) : optional.none()).hasValue()", False),  # ternary_optional_hasValue
    ("{}.?x.hasValue()", False),  # map_optindex_hasValue
    ("has({}.?x.y)", False),  # has_map_optindex
    ("has({'x': {'y': 'z'}}.?x.y)", True),  # has_map_optindex_field
    ("type(optional.none()) == optional_type", True),  # type
    (
        "optional.ofNonZeroValue('').or(optional.of({'c': {'dashed-index': 'goodbye'}}.c['dashed-index'])).orValue('default value')",
        "goodbye",
    ),  # optional_chaining_1
    (
        "{'c': {'dashed-index': 'goodbye'}}.c[?'dashed-index'].orValue('default value')",
        "goodbye",
    ),  # optional_chaining_2
    ("{'c': {}}.c[?'missing-index'].orValue('default value')", "default value"),  # optional_chaining_3
    ("optional.of({'c': {'index': 'goodbye'}}).c.index.orValue('default value')", "goodbye"),  # optional_chaining_4
    (
        "optional.of({'c': {}}).c.missing.or(optional.none()[0]).orValue('default value')",
        "default value",
    ),  # optional_chaining_5
    (
        "optional.of({'c': {}}).c.missing.or(optional.of(['list-value'])[0]).orValue('default value')",
        "list-value",
    ),  # optional_chaining_6
    ("optional.of({'c': {'index': 'goodbye'}}).c['index'].orValue('default value')", "goodbye"),  # optional_chaining_7
    ("optional.of({'c': {}}).c['missing'].orValue('default value')", "default value"),  # optional_chaining_8
    (
        "has(optional.of({'c': {'entry': 'hello world'}}).c) && !has(optional.of({'c': {'entry': 'hello world'}}).c.missing)",
        True,
    ),  # optional_chaining_9
    (
        "{'c': {'dashed-index': 'goodbye'}}.?c.missing.or({'c': {'dashed-index': 'goodbye'}}.?c['dashed-index']).orValue('').size()",
        7,
    ),  # optional_chaining_11
    (
        "{?'nested_map': optional.ofNonZeroValue({?'map': {'c': {'dashed-index': 'goodbye'}}.?c})}",
        {"nested_map": {"map": {"dashed-index": "goodbye"}}},
    ),  # optional_chaining_12
    (
        "{?'nested_map': optional.ofNonZeroValue({?'map': {}.?c}), 'singleton': true}",
        {"singleton": True},
    ),  # optional_chaining_13
    ("[?{}.?c, ?optional.of(42), ?optional.none()]", [42]),  # optional_chaining_14
    ("[?optional.ofNonZeroValue({'c': []}.?c.orValue(dyn({})))]", []),  # optional_chaining_15
    (
        "optional.ofNonZeroValue({?'nested_map': optional.ofNonZeroValue({?'map': optional.of({}).?c})}).hasValue()",
        False,
    ),  # optional_chaining_16
    ("optional.of({}).?c.hasValue()", False),  # optional_empty_map_optindex_hasValue
    ("optional.none().?repeated_string.hasValue()", False),  # optional_none_optselect_hasValue
    ("[][?0].hasValue()", False),  # empty_list_optindex_hasValue
    ("optional.of([])[?0].hasValue()", False),  # optional_empty_list_optindex_hasValue
    ("optional.none()[?0].hasValue()", False),  # optional_none_optindex_hasValue
    ("['foo'][?0].value()", "foo"),  # list_optindex_value
    ("optional.of(['foo'])[?0].value()", "foo"),  # optional_list_optindex_value
    ("{true: 1, 2: 2, 5u: 3}[?true].value()", 1),  # map_key_mixed_type_optindex_value
    ("{1u: 1.0, 2: 2.0, 3u: 3.0}[?3.0].value()", 3.0),  # map_key_mixed_numbers_double_key_optindex_value
    ("{1u: 1.0, 2: 2.0, 3u: 3.0}[?2u].value()", 2.0),  # map_key_mixed_numbers_uint_key_optindex_value
    ("{1u: 1.0, 2: 2.0, 3u: 3.0}[?1].value()", 1.0),  # map_key_mixed_numbers_int_key_optindex_value
    ("optional.none() == optional.none()", True),  # optional_eq_none_none
    ("optional.none() == optional.of(1)", False),  # optional_eq_none_int
    ("optional.of(1) == optional.none()", False),  # optional_eq_int_none
    ("optional.of(1) == optional.of(1)", True),  # optional_eq_int_int
    ("optional.none() != optional.none()", False),  # optional_ne_none_none
    ("optional.none() != optional.of(1)", True),  # optional_ne_none_int
    ("optional.of(1) != optional.none()", True),  # optional_ne_int_none
    ("optional.of(1) != optional.of(1)", False),  # optional_ne_int_int
    ("has({'foo': optional.none()}.foo)", True),  # map_optional_has
    ("has({'foo': optional.none()}.foo.bar)", False),  # map_optional_select_has
    ("has({?'foo': optional.none()}.foo)", False),  # map_optional_entry_has
]
ERRORS = [
    ("{'null_key': dyn(null)}.?null_key.invalid.hasValue()", "no such"),  # map_null_entry_no_such_key
    ("{true: dyn(0)}[?true].absent.hasValue()", "no such"),  # map_present_key_invalid_field
    (
        "optional.ofNonZeroValue({'c': {'dashed-index': 'goodbye'}}.a.z).orValue({'c': {'dashed-index': 'goodbye'}}.c['dashed-index'])",
        "no such",
    ),  # optional_chaining_10
]


@pytest.mark.parametrize(("expr", "want"), VALUES)
def test_value(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and engine.cel_equals(got, want)


@pytest.mark.parametrize(("expr", "want"), ERRORS)
def test_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        ev(expr)
    assert want in exc.value.message


def test_optional_values() -> None:
    assert ev("optional.of(42).optMap(y, y + 1)") == optional_type(43, True)
    assert ev("optional.none().optMap(y, y + 1)") == optional_type()
    assert ev("{'a': {'b': 1}}.?a.optFlatMap(x, x.?b)") == optional_type(1, True)
    assert ev("[1, ?optional.none(), ?optional.of(3)]") == [1, 3]
    assert ev("{'a': 1, ?'b': optional.none()}") == {"a": 1}
    with pytest.raises(engine.CELError, match="found no matching overload for 'optFlatMap'"):
        engine.compile_with("optional.of(1).optFlatMap(x, x + 1)", ())


# cel-spec type_deduction.textproto flexible_type_parameter_assignment / legacy_nullable_types:
# the checker's type of optional expressions, spelled as cel-go spells it
CHECKER_TYPES = [
    ("optional.of(1)", "optional_type(int)"),
    ("optional.none()", "optional_type(dyn)"),
    ("[optional.none(), optional.of(1)]", "list(optional_type(int))"),
    ("[optional.of(1), optional.none()]", "list(optional_type(int))"),
    ("[optional.of(1), optional.of(dyn(1))]", "list(optional_type(dyn))"),
    ("[optional.of(dyn(1)), optional.of(1)]", "list(optional_type(dyn))"),
    ("true ? optional.of(dyn(1)) : optional.of(1)", "optional_type(dyn)"),
    ("[optional.of(1), null][0]", "optional_type(int)"),
    ("{'a': 1}.?a", "optional_type(int)"),
    ("{'a': 1}.?a.value()", "int"),
    ("{'a': 1}.?a.orValue(2)", "int"),
    ("[1, 2][?0]", "optional_type(int)"),
    ("optional.of('x').optMap(s, size(s))", "optional_type(int)"),
    ("[1, ?optional.of(2)]", "list(int)"),
]


@pytest.mark.parametrize(("expr", "want"), CHECKER_TYPES)
def test_checker_types(expr: str, want: str) -> None:
    assert engine.type_name(engine.compile_with(expr, (), kubernetes=False).output_type) == want


# the free element type of [] joins the other elements' (type_deduction list_parameter)
LIST_TYPES = [
    ("[]", "list(dyn)"),
    ("[[], [1]]", "list(list(int))"),
    ("[[], [[]], [[[]]], [[[[]]]]]", "list(list(list(list(list(dyn)))))"),
    ("[[[[[]]]], [], [[[]]]]", "list(list(list(list(list(dyn)))))"),
    ("[].map(x, x)", "list(dyn)"),
]


@pytest.mark.parametrize(("expr", "want"), LIST_TYPES)
def test_list_literal_types(expr: str, want: str) -> None:
    assert engine.type_name(engine.compile_with(expr, (), kubernetes=False).output_type) == want
