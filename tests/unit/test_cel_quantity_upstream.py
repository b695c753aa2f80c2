"""Kubernetes' quantity CEL library: cases ported from kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/cel/library/quantity_test.go (expected values and error
texts). Its mul/div/divInt cases are left out: those functions are not in the library
mockkube follows."""

from __future__ import annotations

import pytest

from mockkube.cel import engine


def ev(expr: str) -> object:
    return engine.compile_with(expr, ()).evaluate({})


VALUES = [
    ('isQuantity("20")', True),
    ('isQuantity("20M")', True),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('isQuantity("10Mm")', False),
    ('quantity("200M") == quantity("200M")', True),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") '
        '&& quantity("0.002G") == quantity("2000k")',
        True,
    ),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50M").isLessThan(quantity("100M"))', True),
    ('quantity("100M").isLessThan(quantity("50M"))', False),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    ('quantity("50").isInteger()', True),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
]

ERRORS = [
    ('quantity("10Mo")', "quantities must match the regular expression"),
    ('quantity("10Mm")', "unable to parse quantity's suffix"),
    ('quantity("9999999999999999999999999999999999999G").asInteger()', "cannot convert value to integer"),
]


@pytest.mark.parametrize(("expr", "want"), VALUES)
def test_value(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize(("expr", "want"), ERRORS)
def test_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        ev(expr)
    assert exc.value.message.startswith(want)


def test_no_overload() -> None:
    with pytest.raises(engine.CELError, match="found no matching overload for 'isQuantity' applied to"):
        engine.compile_with("isQuantity([1, 2, 3])", ())
