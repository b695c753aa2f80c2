"""CRD write-time cost limits as upstream's apiextensions validation applies them
(apiextensions-apiserver v0.36.0 pkg/apis/apiextensions/validation/validation_test.go: the
cost cases of TestValidateCustomResourceDefinitionValidation and of the update test,
TestCostInfo, TestPerCRDEstimatedCost): a rule's estimated cost times how often its node may
repeat, held to 10,000,000 per expression and 100,000,000 per version's schema."""

from __future__ import annotations

import pytest

from mockkube.apiserver import crdcel
from mockkube.apiserver.resources.apiextensions_validation import (
    _CelCost,
    _child_cardinality,
    validate_crd,
    validate_structural,
)
from mockkube.machinery.fielderrors import Path

ROOT = "spec.validation.openAPIV3Schema"


def _errors(schema: dict) -> list[tuple[str, str]]:
    return sorted((e.type, e.field) for e in validate_structural(schema, Path(ROOT)))


def _obj(**props: dict) -> dict:
    return {"type": "object", "properties": props}


def _nested(rule: str, value_max_items=None, map_max=None, key: dict | None = None) -> dict:
    entry = {"type": "object", "required": ["key"], "properties": {"key": key or {"type": "string"}}}
    items: dict = {"type": "object", "additionalProperties": entry}
    if map_max is not None:
        items["maxProperties"] = map_max
    value: dict = {"type": "array", "items": items, "x-kubernetes-validations": [{"rule": rule}]}
    if value_max_items is not None:
        value["maxItems"] = value_max_items
    return _obj(value=value)


DOUBLE = "self.all(x, x.all(y, x[y].key == x[y].key))"
RULE = f"{ROOT}.properties[value].x-kubernetes-validations[0].rule"
FORBIDDEN = "Forbidden"


def test_forbid_double_nested_rule_with_no_limit_set():
    assert _errors(_nested(DOUBLE)) == sorted([(FORBIDDEN, RULE), (FORBIDDEN, RULE), (FORBIDDEN, ROOT)])


def test_forbid_double_nested_rule_with_one_limit_set():
    schema = _nested(DOUBLE, key={"type": "string", "maxLength": 10})
    assert _errors(schema) == sorted([(FORBIDDEN, RULE), (FORBIDDEN, RULE), (FORBIDDEN, ROOT)])


def test_allow_double_nested_rule_with_three_limits_set():
    assert _errors(_nested(DOUBLE, 10, 10, {"type": "string", "maxLength": 10})) == []


def test_allow_double_nested_rule_with_one_limit_set_on_outermost_array():
    assert _errors(_nested(DOUBLE, 4, key={"type": "number"})) == []


def test_check_for_cardinality_of_1_under_root_object():
    schema = _obj(value={"type": "integer", "x-kubernetes-validations": [{"rule": "self < 1024"}]})
    assert _errors(schema) == []


def test_forbid_validation_rules_where_cost_total_exceeds_total_limit():
    contains = [{"rule": "self.contains('keyword')"}]
    schema = _obj(
        list={
            "type": "array",
            "maxItems": 100000,
            "items": {"type": "string", "maxLength": 5000, "x-kubernetes-validations": contains},
        },
        map={
            "type": "object",
            "maxProperties": 1000,
            "additionalProperties": {"type": "string", "maxLength": 5000, "x-kubernetes-validations": contains},
        },
        field={"type": "integer", "x-kubernetes-validations": [{"rule": "self > 50 && self < 100"}]},
    )
    list_rule = f"{ROOT}.properties[list].items.x-kubernetes-validations[0].rule"
    map_rule = f"{ROOT}.properties[map].additionalProperties.x-kubernetes-validations[0].rule"
    assert _errors(schema) == sorted(
        [(FORBIDDEN, list_rule), (FORBIDDEN, list_rule), (FORBIDDEN, map_rule), (FORBIDDEN, ROOT)]
    )
    messages = {e.detail for e in validate_structural(schema, Path(ROOT))}
    assert "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema" in messages
    assert any(
        m.startswith("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget")
        for m in messages
    )


def _string_list_with(message_expression: str) -> dict:
    return _obj(
        f={
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "true", "messageExpression": message_expression}],
        }
    )


EIGHT = "self[0] + self[1] + self[2] + self[3] + self[4] + self[5] + self[6] + self[7]"
MSG = f"{ROOT}.properties[f].x-kubernetes-validations[0].messageExpression"


def test_message_expression_exceeding_per_expression_cost_limit():
    assert _errors(_string_list_with(EIGHT)) == [(FORBIDDEN, MSG)]


def test_lower_ascii_rule_within_cost_limit():
    rule = "self.all(x, self.exists_one(y, x.lowerAscii() == y.lowerAscii()))"
    schema = _obj(
        f={
            "type": "array",
            "maxItems": 5,
            "items": {"type": "string", "maxLength": 5},
            "x-kubernetes-validations": [{"rule": rule}],
        }
    )
    assert _errors(schema) == []


def test_message_expression_exceeding_per_crd_cost_limit():
    schema = _string_list_with("string(self[0]) + string(self[1]) + string(self[2])")
    assert _errors(schema) == sorted([(FORBIDDEN, ROOT), (FORBIDDEN, MSG), (FORBIDDEN, MSG)])


def test_cost_error_message_is_upstreams():
    errs = validate_structural(_nested(DOUBLE), Path(ROOT))
    rule_errs = [e.detail for e in errs if e.field == RULE]
    assert (
        "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)" in rule_errs
    )
    assert crdcel.cost_error_message("x", 12_000_000, 10_000_000).startswith("x exceeds budget by factor of 1.200000x")
    assert crdcel.cost_error_message("x", 25_000_000, 10_000_000).startswith("x exceeds budget by factor of 2.5x")


def _crd(versions: dict) -> dict:
    return {
        "metadata": {"name": "plural.group.com"},
        "spec": {
            "group": "group.com",
            "scope": "Cluster",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": [
                {"name": n, "served": True, "storage": n == "v1", "schema": {"openAPIV3Schema": s}}
                for n, s in versions.items()
            ],
        },
    }


def test_suppress_per_expression_cost_limit_in_pre_existing_versions():
    expensive = _string_list_with(EIGHT)
    touched = _string_list_with(EIGHT)
    touched["properties"]["f"]["description"] = "touched"
    old = _crd({"v1": expensive, "v2": _string_list_with(EIGHT)})
    new = _crd({"v1": _string_list_with(EIGHT), "v2": touched, "v3": _string_list_with(EIGHT)})
    got = sorted((e.type, e.field) for e in validate_crd(new, old))
    msg = "schema.openAPIV3Schema.properties[f].x-kubernetes-validations[0].messageExpression"
    assert got == [(FORBIDDEN, f"spec.versions[1].{msg}"), (FORBIDDEN, f"spec.versions[2].{msg}")]


# TestCostInfo: the MaxCardinality of a string below the listed schemas
_OBJ, _ARR, _MAP = {"type": "object"}, {"type": "array"}, {"type": "object", "additionalProperties": {}}
MAX_UINT = 2**64 - 1


@pytest.mark.parametrize(
    ("schemas", "want"),
    [
        ([_OBJ], 1),
        ([dict(_ARR, maxItems=5)], 5),
        ([_ARR], None),
        ([dict(_MAP, maxProperties=10)], 10),
        ([_MAP], None),
        ([dict(_MAP, maxProperties=5), dict(_ARR, maxItems=5)], 25),
        ([dict(_MAP, maxProperties=5), _ARR], None),
        ([dict(_ARR, maxItems=3), _OBJ], 3),
        ([dict(_ARR, maxItems=2), _OBJ, dict(_MAP, maxProperties=4)], 8),
        ([dict(_ARR, maxItems=2**63 - 1), dict(_ARR, maxItems=100)], MAX_UINT),
    ],
    ids=[
        "object",
        "array",
        "unbounded array",
        "map",
        "unbounded map",
        "array inside map",
        "unbounded array inside bounded map",
        "object inside array",
        "map inside object inside array",
        "integer overflow bounds check",
    ],
)
def test_cost_info(schemas, want):
    card: int | None = 1
    for s in schemas:
        card = _child_cardinality(s, card)
    assert card == want


@pytest.mark.parametrize(
    ("costs", "expensive", "total"),
    [
        ([], [], 0),
        ([1000000], [1000000], 1000000),
        ([900000], [], 900000),
        ([5000000, 25000000], [25000000, 5000000], 30000000),
        ([5000000, 25000000, 900000], [25000000, 5000000], 30900000),
        ([16000000, 50000000, 34000000, 50000000], [50000000, 50000000, 34000000, 16000000], 150000000),
        (
            [16000000, 50000000, 900000, 34000000, 50000000, 50000001],
            [50000001, 50000000, 50000000, 34000000],
            200900001,
        ),
        ([MAX_UINT // 2, MAX_UINT // 2, 1, 10, 100, 1000], [MAX_UINT // 2, MAX_UINT // 2], MAX_UINT),
    ],
)
def test_per_crd_estimated_cost(costs, expensive, total):
    c = _CelCost(False)
    for cost in costs:
        c.observe("", cost)
    assert [x for x, _ in c.most_expensive] == expensive
    assert c.total == total
