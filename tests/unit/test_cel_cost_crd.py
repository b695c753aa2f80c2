"""apiextensions-apiserver pkg/apiserver/schema/cel/compilation_test.go TestCostEstimation
(v0.36.0): the estimated maximum cost of a CRD rule from the sizes its schema declares (or
that a 3 MiB request bounds), case by case with upstream's expected figures.

Each case runs twice, as upstream's does: with the schema's maxItems/maxProperties/
maxLength unset ("calc") and set to the case's figure ("set"). An expected cost of 0 is
not checked (upstream's convention); ``exceeds`` asks for at least that cost.
"""

from __future__ import annotations

import pytest

from mockkube.apiserver import crdcel

COST_LIMIT = 100_000_000


def _rule(s: dict, rule: str) -> dict:
    return dict(s, **{"x-kubernetes-validations": [{"rule": rule}]})


def _typed(t: str) -> dict:
    if t in ("duration", "date", "date-time"):
        return {"type": "string", "format": t}
    if t == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    return {"type": t}


def _with(s: dict, key: str, v: int | None) -> dict:
    return dict(s, **{key: v}) if v is not None else s


def genArrayWithRule(t: str, rule: str):  # noqa: N802 - upstream's generator names
    return lambda m: _rule(_with({"type": "array", "items": _typed(t)}, "maxItems", m), rule)


def genArrayOfArraysWithRule(t: str, rule: str):  # noqa: N802
    return lambda m: _rule(
        _with({"type": "array", "items": {"type": "array", "items": {"type": t}}}, "maxItems", m), rule
    )


OBJECT_FOR_MAP = {
    "type": "object",
    "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
    "required": ["required"],
}
ARRAY_FOR_MAP = {"type": "array", "items": {"type": "number"}}
MAP_FOR_MAP = {"type": "object", "additionalProperties": {"type": "number"}}


def genObjectArrayWithRule(rule: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "array", "items": OBJECT_FOR_MAP}, "maxItems", m), rule)


def getMapArrayWithRule(t: str, rule: str):  # noqa: N802
    items = {"type": "object", "additionalProperties": {"type": t}}
    return lambda m: _rule(_with({"type": "array", "items": items}, "maxItems", m), rule)


def genMapWithRule(t: str, rule: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "object", "additionalProperties": _typed(t)}, "maxProperties", m), rule)


def genStringWithRule(rule: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "string"}, "maxLength", m), rule)


def genEnumWithRuleAndValues(rule: str, *values: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "string", "enum": list(values)}, "maxLength", m), rule)


def genBytesWithRule(rule: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "string", "format": "byte"}, "maxLength", m), rule)


def genNestedSpecWithRule(rule: str):  # noqa: N802
    return lambda m: _rule(
        _with(
            {"type": "object", "additionalProperties": _with({"type": "string"}, "maxLength", m)}, "maxProperties", m
        ),
        rule,
    )


def genAllMaxNestedSpecWithRootRule(rule: str):  # noqa: N802
    def gen(m):
        inner = _with(dict(OBJECT_FOR_MAP), "maxProperties", m)
        items = _with({"type": "object", "additionalProperties": inner}, "maxProperties", m)
        return _rule(_with({"type": "array", "items": items}, "maxItems", m), rule)

    return gen


def genOneMaxNestedSpecWithRootRule(rule: str):  # noqa: N802
    def gen(m):
        items = _with({"type": "object", "additionalProperties": dict(OBJECT_FOR_MAP)}, "maxProperties", m)
        return _rule({"type": "array", "items": items}, rule)

    return gen


def genMapWithCustomItemRule(item: dict, rule: str):  # noqa: N802
    return lambda m: _rule(_with({"type": "object", "additionalProperties": item}, "maxProperties", m), rule)


def _join(m):
    s = _with({"type": "string"}, "maxLength", m)
    return _rule(_with({"type": "array", "items": s}, "maxItems", m), "self.join(' ') == 'aa bb'")


def _is_sorted(m):
    s = _with({"type": "string"}, "maxLength", m)
    return _rule(_with({"type": "array", "items": s}, "maxItems", m), "self.isSorted() == true")


def _replace(m):
    props = {
        "str": _with({"type": "string"}, "maxLength", m),
        "before": {"type": "string", "maxLength": 2},
        "after": {"type": "string", "maxLength": 4},
    }
    return _rule(
        {"type": "object", "properties": props}, "self.str.replace(self.before, self.after) == 'does not matter'"
    )


def _split(m):
    s = _with({"type": "string"}, "maxLength", m)
    return _rule({"type": "object", "properties": {"str": s, "separator": s}}, "self.str.split(self.separator) == []")


def _lower(m):
    return _rule(_with({"type": "string"}, "maxLength", m), "self.lowerAscii() == 'lower!'")


def _int_or_string_quantity(m):
    return _rule(_with({"x-kubernetes-int-or-string": True}, "maxLength", m), "isQuantity(self)")


# (name, generator, calc cost, calc exceeds, set max elements, set cost, set exceeds)
CASES = [
    ("number array with all", genArrayWithRule("number", "self.all(x, true)"), 4718591, 0, 10, 32, 0),
    ("string array with all", genArrayWithRule("string", "self.all(x, true)"), 3145727, 0, 20, 62, 0),
    ("boolean array with all", genArrayWithRule("boolean", "self.all(x, true)"), 1887437, 0, 5, 17, 0),
    (
        "array of number arrays with all",
        genArrayOfArraysWithRule("number", "self.all(x, true)"),
        3145727,
        0,
        100,
        302,
        0,
    ),
    ("array of objects with all", genObjectArrayWithRule("self.all(x, true)"), 555128, 0, 50, 152, 0),
    ("map of numbers with all", genMapWithRule("number", "self.all(x, true)"), 1348169, 0, 10, 32, 0),
    ("map of numbers with has", genMapWithRule("number", "has(self.x)"), 0, 0, 100, 0, 0),
    ("map of strings with all", genMapWithRule("string", "self.all(x, true)"), 1179647, 0, 3, 11, 0),
    ("map of strings with has", genMapWithRule("string", "has(self.x)"), 0, 0, 550, 0, 0),
    ("map of booleans with all", genMapWithRule("boolean", "self.all(x, true)"), 943718, 0, 100, 302, 0),
    ("map of booleans with has", genMapWithRule("boolean", "has(self.x)"), 0, 0, 1024, 0, 0),
    ("string with contains", genStringWithRule("self.contains('test')"), 314574, 0, 10, 5, 0),
    ("string with startsWith", genStringWithRule("self.startsWith('test')"), 2, 0, 15, 2, 0),
    ("string with endsWith", genStringWithRule("self.endsWith('test')"), 2, 0, 30, 2, 0),
    ("concat string", genStringWithRule('size(self + "hello") > size("hello")'), 314578, 0, 4, 7, 0),
    ("index of array with numbers", genArrayWithRule("number", "self[1] == 0.0"), 2, 0, 5000, 2, 0),
    ("index of array with strings", genArrayWithRule("string", "self[1] == self[1]"), 314577, 0, 8, 314577, 0),
    (
        "O(n^2) loop with numbers",
        genArrayWithRule("number", "self.all(x, self.all(y, true))"),
        0,
        COST_LIMIT,
        10,
        352,
        0,
    ),
    (
        "O(n^3) loop with numbers",
        genArrayWithRule("number", "self.all(x, self.all(y, self.all(z, true)))"),
        0,
        COST_LIMIT,
        10,
        3552,
        0,
    ),
    ("regex matches simple", genStringWithRule('self.matches("x")'), 314574, 0, 50, 22, 0),
    ("regex matches empty string", genStringWithRule('"".matches("(((((((((())))))))))[0-9]")'), 7, 0, 10, 7, 0),
    ("regex matches empty regex", genStringWithRule('self.matches("")'), 1, 0, 100, 1, 0),
    (
        "map of strings with value length",
        genNestedSpecWithRule("self.all(x, x.contains(self[x]))"),
        2752507,
        0,
        10,
        72,
        0,
    ),
    ("set array maxLength to zero", genArrayWithRule("number", "self[3] == 0.0"), 2, 0, 0, 2, 0),
    ("set map maxLength to zero", genMapWithRule("number", 'self["x"] == 0.0'), 2, 0, 0, 2, 0),
    ("set string maxLength to zero", genStringWithRule('self == "x"'), 2, 0, 0, 1, 0),
    ("set bytes maxLength to zero", genBytesWithRule('self == b"x"'), 2, 0, 0, 1, 0),
    (
        "set maxLength greater than estimated maxLength",
        genArrayWithRule("number", "self.all(x, x == 0.0)"),
        6291454,
        0,
        3 * 1024 * 2048,
        25165826,
        0,
    ),
    (
        "nested types with root rule with all supporting maxLength",
        genAllMaxNestedSpecWithRootRule('self.all(x, x["y"].required == "z")'),
        7340027,
        0,
        10,
        72,
        0,
    ),
    (
        "nested types with root rule with one supporting maxLength",
        genOneMaxNestedSpecWithRootRule('self.all(x, x["y"].required == "z")'),
        7340027,
        0,
        10,
        7340027,
        0,
    ),
    ("int-or-string array with all", genArrayWithRule("int-or-string", "self.all(x, true)"), 4718591, 0, 10, 32, 0),
    ("index of array with int-or-strings", genArrayWithRule("int-or-string", "self[0] == 5"), 3, 0, 10, 3, 0),
    ("index of array with booleans", genArrayWithRule("boolean", "self[0] == false"), 2, 0, 25, 2, 0),
    ("index of array of objects", genObjectArrayWithRule("self[0] == null"), 2, 0, 422, 2, 0),
    ("index of array of array of numnbers", genArrayOfArraysWithRule("number", "self[0][0] == -1.0"), 3, 0, 51, 3, 0),
    ("array of number maps with all", getMapArrayWithRule("number", "self.all(x, x.y == 25.2)"), 6291452, 0, 12, 74, 0),
    ("index of array of number maps", getMapArrayWithRule("number", "self[0].x > 2.0"), 4, 0, 3000, 4, 0),
    ("duration array with all", genArrayWithRule("duration", "self.all(x, true)"), 2359295, 0, 5, 17, 0),
    ("index of duration array", genArrayWithRule("duration", "self[0].getHours() == 2"), 4, 0, 525, 4, 0),
    ("date array with all", genArrayWithRule("date", "self.all(x, true)"), 725936, 0, 15, 47, 0),
    ("index of date array", genArrayWithRule("date", "self[2].getDayOfMonth() == 13"), 4, 0, 42, 4, 0),
    ("date-time array with all", genArrayWithRule("date-time", "self.all(x, true)"), 428963, 0, 25, 77, 0),
    ("index of date-time array", genArrayWithRule("date-time", "self[2].getMinutes() == 45"), 4, 0, 99, 4, 0),
    ("map of int-or-strings with all", genMapWithRule("int-or-string", "self.all(x, true)"), 1348169, 0, 15, 47, 0),
    ("map of int-or-strings with has", genMapWithRule("int-or-string", "has(self.x)"), 0, 0, 5000, 0, 0),
    ("map of objects with all", genMapWithCustomItemRule(OBJECT_FOR_MAP, "self.all(x, true)"), 428963, 0, 20, 62, 0),
    ("map of objects with has", genMapWithCustomItemRule(OBJECT_FOR_MAP, "has(self.x)"), 0, 0, 9001, 0, 0),
    ("map of number maps with all", genMapWithCustomItemRule(MAP_FOR_MAP, "self.all(x, true)"), 1179647, 0, 10, 32, 0),
    ("map of number maps with has", genMapWithCustomItemRule(MAP_FOR_MAP, "has(self.x)"), 0, 0, 101, 0, 0),
    (
        "map of number arrays with all",
        genMapWithCustomItemRule(ARRAY_FOR_MAP, "self.all(x, true)"),
        1179647,
        0,
        25,
        77,
        0,
    ),
    ("map of number arrays with has", genMapWithCustomItemRule(ARRAY_FOR_MAP, "has(self.x)"), 0, 0, 40000, 0, 0),
    ("map of durations with all", genMapWithRule("duration", "self.all(x, true)"), 1048577, 0, 5, 17, 0),
    ("map of durations with has", genMapWithRule("duration", "has(self.x)"), 0, 0, 256, 0, 0),
    ("map of dates with all", genMapWithRule("date", "self.all(x, true)"), 524288, 0, 10, 32, 0),
    ("map of dates with has", genMapWithRule("date", "has(self.x)"), 0, 0, 65536, 0, 0),
    ("map of date-times with all", genMapWithRule("date-time", "self.all(x, true)"), 349526, 0, 25, 77, 0),
    ("map of date-times with has", genMapWithRule("date-time", "has(self.x)"), 0, 0, 490, 0, 0),
    ("check cost of size call", genMapWithRule("integer", "oldSelf.size() == self.size()"), 5, 0, 10, 5, 0),
    ("check cost of timestamp comparison", genMapWithRule("date-time", 'self["a"] == self["b"]'), 8, 0, 7, 8, 0),
    ("check cost of duration comparison", genMapWithRule("duration", 'self["c"] == self["d"]'), 8, 0, 42, 8, 0),
    (
        "enums with maxLength equals to the longest possible value",
        genEnumWithRuleAndValues("self.contains('A')", "A", "B", "C", "LongValue"),
        2,
        0,
        1000,
        401,
        0,
    ),
    ("extended library regex find", genStringWithRule("self.find('[0-9]+') == ''"), 629147, 0, 10, 11, 0),
    ("extended library join", _join, 329853068905, 0, 10, 43, 0),
    ("extended library isSorted", _is_sorted, 329854432052, 0, 10, 52, 0),
    ("extended library replace", _replace, 629154, 0, 4, 12, 0),
    ("extended library split", _split, 629160, 0, 10, 22, 0),
    ("extended library lowerAscii", _lower, 314575, 0, 10, 6, 0),
    ("IntOrString type with quantity rule", _int_or_string_quantity, 314574, 0, 20, 9, 0),
]
RUNS = [(f"{c[0]} / calc maxLength", c[1], None, c[2], c[3]) for c in CASES] + [
    (f"{c[0]} / set maxLength", c[1], c[4], c[5], c[6]) for c in CASES
]


def test_every_upstream_case_is_here():
    assert len(CASES) == 68


@pytest.mark.parametrize(("name", "gen", "max_elements", "want", "exceeds"), RUNS, ids=[r[0] for r in RUNS])
def test_rule_cost(name, gen, max_elements, want, exceeds):
    node = gen(max_elements)
    rule = node["x-kubernetes-validations"][0]["rule"]
    prog = crdcel.compile_rule(rule, node, False, False)
    cost = crdcel.rule_cost(prog, node)
    if want:
        assert cost == want
    if exceeds:
        assert cost >= exceeds
