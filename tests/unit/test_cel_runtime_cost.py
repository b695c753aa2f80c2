"""Runtime cost of CRD rules as upstream charges it: apiextensions-apiserver v0.36.0
pkg/apiserver/schema/cel/validation_test.go (TestValidationExpressions' expectedCost cases,
TestCELValidationLimit, TestMessageExpression's budget cases). Kubernetes plans programs
with cel.OptOptimize, so literal lists of constants cost nothing at run time."""

from __future__ import annotations

import pytest

from mockkube.apiserver import crdcel

TWO_STRINGS = {"type": "object", "properties": {"val1": {"type": "string"}, "val2": {"type": "string"}}}


def _spent(
    schema: dict, obj: dict, budget: int = crdcel.RUNTIME_COST_BUDGET, per_call: int = crdcel.PER_CALL_LIMIT
) -> tuple[list[str], int]:
    b = crdcel._Budget(budget, per_call)
    errs: list = []
    crdcel._walk(obj, None, schema, crdcel.fe.Path("root"), errs, False, b)
    return [str(e) for e in errs], budget - b.remaining


@pytest.mark.parametrize(
    ("rule", "cost"),
    [
        ("[1,2,3,4].isSorted()", 4),
        ("url('https:://kubernetes.io/').getHostname() != 'test'", 4),
        ("size('abc 123 def 123'.split(' ')) > 0", 5),
        ("size(['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')) > 0", 7),
    ],
)
def test_cost_for_extended_lib_calculated_correctly(rule, cost):
    schema = dict(TWO_STRINGS, **{"x-kubernetes-validations": [{"rule": rule}]})
    errs, spent = _spent(schema, {"val1": "20", "val2": "200M"})
    assert errs == [] and spent == cost


def test_cel_validation_limit():
    schema = {
        "type": "object",
        "properties": {"val1": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.val1 > 0"}],
    }
    errs, _ = _spent(schema, {"val1": 2**63 - 1}, budget=0)
    assert errs == [
        'root: Invalid value: "object": validation failed due to running out of cost budget, no further '
        "validation rules will be run"
    ]
    errs, _ = _spent(schema, {"val1": 2**63 - 1}, per_call=0)
    assert errs == [
        "root: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation "
        "rules will be run due to call cost exceeds limit for rule: self.val1 > 0"
    ]


def test_message_expression_over_the_per_call_limit():
    schema = _message_schema('"string 1" + "string 2" + "string 3"')
    errs, _ = _spent(schema, {"str": "a string"}, per_call=1)
    assert len(errs) == 1 and "call cost exceeds limit for messageExpression" in errs[0]


def _message_schema(message_expression: str, message: str | None = None) -> dict:
    rule: dict = {"rule": "false", "messageExpression": message_expression}
    if message:
        rule["message"] = message
    return {"type": "object", "properties": {"str": {"type": "string"}}, "x-kubernetes-validations": [rule]}


@pytest.mark.parametrize(
    ("name", "budget", "message", "expr", "want", "remaining"),
    [
        ("no cost error expected", 300, None, '"static string"', "static string", 300),
        (
            "limit exceeded",
            1,
            None,
            '"string 1" + "string 2" + "string 3"',
            "messageExpression evaluation failed due to running out of cost budget",
            None,
        ),
        ("messageExpression budget (str concat)", 50, None, '"str1 " + self.str', "str1 a string", 46),
        (
            "runtime cost preserved if messageExpression fails during evaluation",
            50,
            "message not messageExpression",
            '"str1 " + ["a", "b", "c", "d"][4]',
            "message not messageExpression",
            47,
        ),
        (
            "runtime cost preserved if messageExpression fails during evaluation (no message set)",
            50,
            None,
            '"str1 " + ["a", "b", "c", "d"][4]',
            "failed rule",
            47,
        ),
    ],
)
def test_message_expression_budget(name, budget, message, expr, want, remaining):
    errs, spent = _spent(_message_schema(expr, message), {"str": "a string"}, budget)
    assert len(errs) == 1 and want in errs[0]
    if remaining is not None:
        assert budget - spent == remaining
