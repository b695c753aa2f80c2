"""cel-go ext/lists_test.go TestListsCosts (v0.26.0, Kubernetes v1.36's cel-go): the
estimated and the actual cost of ext.Lists(v3)'s functions, case by case; upstream's test
size estimator takes sizes from ``hints`` by variable path. Evaluated without Kubernetes'
constant folding, as cel-go's test plans them."""

from __future__ import annotations

import pytest

from mockkube.cel import compile_with
from mockkube.cel.engine import COST_KEY

U64 = 2**64 - 1
INT_LIST, DYN_LIST, STRING_LIST = ("list", "int"), ("list", "dyn"), ("list", "string")

# (name, expr, vars, activation, hints, (min, max), actual)
CASES = [
    ("list_range", "lists.range(4) == [0, 1, 2, 3]", {}, {}, {}, (26, 26), 26),
    ("list_range_computed", "lists.range(4 / 2) == [0, 1]", {}, {}, {}, (U64, U64), 25),
    ("list_range_var", "lists.range(x) == [0, 1, 2, 3, 4]", {"x": "int"}, {"x": 5}, {"x": 10}, (U64, U64), 28),
    ("list_flatten_depth_one", "[[1, 2], 3].flatten(1) == [1, 2, 3]", {}, {}, {}, (44, 44), 44),
    ("list_flatten_depth_two", "[[1, 2], 3].flatten(2) == [1, 2, 3]", {}, {}, {}, (46, 46), 46),
    ("list_flatten_depth_three", "[[1, 2], 3].flatten(3) == [1, 2, 3]", {}, {}, {}, (48, 48), 48),
    ("list_flatten", "[[1], 2, 3].flatten() == [1, 2, 3]", {}, {}, {}, (45, 45), 45),
    ("list_flatten_var", "x.flatten() == [1, 2, 3]", {"x": DYN_LIST}, {"x": [[1], 2, 3]}, {"x": 3}, (23, 26), 26),
    (
        "list_flatten_depth_var",
        "[[1, 2], 3].flatten(x) == [1, 2, 3]",
        {"x": "int"},
        {"x": 5},
        {"x": 10},
        (U64, U64),
        53,
    ),
    ("list_distinct_worst_case", "[1, 2, 3].distinct() == [1, 2, 3]", {}, {}, {}, (50, 50), 50),
    ("list_distinct_best_case", "[1, 1, 1].distinct() == [1]", {}, {}, {}, (50, 50), 50),
    (
        "list_distinct_var",
        "x.distinct() == ['hello']",
        {"x": STRING_LIST},
        {"x": ["hello", "hello"]},
        {"x": 3},
        (23, 41),
        31,
    ),
    (
        "list_slice_var_range",
        "[1, 2, 3, 4, 5].slice(x, y) == [2, 3]",
        {"x": "int", "y": "int"},
        {"x": 1, "y": 3},
        {},
        (39, 39),
        36,
    ),
    (
        "list_slice_var_list",
        "z.slice(1, 3) == [2, 3]",
        {"z": INT_LIST},
        {"z": [1, 2, 3, 4, 5, 6, 7]},
        {"z": 10},
        (25, 25),
        25,
    ),
    (
        "list_slice_var_list_var_range",
        "z.slice(x, y) == [2, 3]",
        {"x": "int", "y": "int", "z": INT_LIST},
        {"x": 1, "y": 3, "z": [1, 2, 3, 4, 5, 6, 7]},
        {"z": 10},
        (35, 35),
        27,
    ),
    ("list_slice", "[1, 2, 3].slice(1, 3) == [2, 3]", {}, {}, {}, (34, 34), 34),
    ("list_reverse", "[3, 2, 1].reverse() == [1, 2, 3]", {}, {}, {}, (35, 35), 35),
    ("list_var_reverse", "x.reverse() == [1, 2, 3]", {"x": INT_LIST}, {"x": [3, 2, 1]}, {"x": 5}, (23, 28), 26),
    ("list_sort", "[2, 3, 1].sort() == [1, 2, 3]", {}, {}, {}, (50, 50), 50),
    ("list_sort_var", "x.sort() == [1, 2, 3]", {"x": INT_LIST}, {"x": [3, 2, 1]}, {"x": 5}, (23, 73), 41),
    (
        "list_sort_var_string",
        'x.sort() == ["a", "a", "b", "b", "c", "c"]',
        {"x": STRING_LIST},
        {"x": ["b", "a", "b", "a", "c", "c"]},
        {"x": 10},
        (23, 233),
        98,
    ),
    ("list_sort_var_int_empty", "x.sort() == []", {"x": INT_LIST}, {"x": []}, {"x": 10}, (22, 222), 22),
    ("list_sortBy", "[{'x':4}, {'x':3}].sortBy(m, m['x']) == [{'x':3}, {'x':4}]", {}, {}, {}, (211, 211), 211),
    (
        "list_sortBy_var",
        "x.sortBy(m, m['x']) == [{'x':3}, {'x':4}]",
        {"x": DYN_LIST},
        {"x": [{"x": 4}, {"x": 3}]},
        {"x": 5},
        (106, 226),
        142,
    ),
    (
        "list_sortBy_var_string",
        "x.sortBy(m, m['x']) == [{'x': 'a'}, {'x': 'b'}, {'x': 'c'}]",
        {"x": ("list", ("map", "string", "string"))},
        {"x": [{"x": "b"}, {"x": "c"}, {"x": "a"}]},
        {"x": 3},
        (136, 197),
        196,
    ),
]


def _sizes(hints: dict):
    return lambda path, _t: (0, hints[".".join(path)]) if ".".join(path) in hints else None


@pytest.mark.parametrize(
    ("name", "expr", "variables", "act", "hints", "est", "actual"), CASES, ids=[c[0] for c in CASES]
)
def test_lists_costs(name, expr, variables, act, hints, est, actual):
    prog = compile_with(expr, tuple(variables.items()), kubernetes=False, tracked=True)
    assert prog.cost_estimate(_sizes(hints), key=("lists", name), presence_test_cost=1, k8s=False) == est
    activation = dict(act, **{COST_KEY: [10**12]})
    assert prog.evaluate(activation) is True
    assert 10**12 - activation[COST_KEY][0] == actual
