"""Kubernetes' semver CEL library: cases ported from kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/cel/library/semver_test.go (expected values and error
texts)."""

from __future__ import annotations

import pytest

from mockkube.cel import engine


def ev(expr: str) -> object:
    return engine.compile_with(expr, ()).evaluate({})


VALUES = [
    ('isSemver("1.2.3-beta.1+build.1")', True),
    ('isSemver("")', False),
    ('isSemver("v1.0.0")', False),
    ('isSemver(" 1.0.0")', False),
    ('isSemver("1. 0.0")', False),
    ('isSemver("1.0.0 ")', False),
    ('isSemver("01.01.01")', False),
    ('isSemver("1")', False),
    ('isSemver("1.1")', False),
    ('isSemver("", true)', False),
    ('isSemver(" 1.0.0", true)', False),
    ('isSemver("1. 0.0", true)', False),
    ('isSemver("1.0.0 ", true)', False),
    ('isSemver("v1.0.0", true)', True),
    ('isSemver("01.01.01", true)', True),
    ('isSemver("1", true)', True),
    ('isSemver("1.1", true)', True),
    ('semver("v01.01", true) == semver("1.1.0")', True),
    ('semver("1.2.3") == semver("1.2.3")', True),
    ('semver("1.2.3") == semver("1.0.0")', False),
    ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    ('semver("1.2.3").major()', 1),
    ('semver("1.2.3").minor()', 2),
    ('semver("1.2.3").patch()', 3),
]

ERRORS = [
    ('semver("v1.0")', "No Major.Minor.Patch elements found"),
    ('semver("")', "Version string empty"),
    ('semver("01.2.3")', 'Major number must not contain leading zeroes "01"'),
    ('semver("1.x.3")', 'Invalid character(s) found in minor number "x"'),
]


@pytest.mark.parametrize(("expr", "want"), VALUES)
def test_value(expr: str, want: object) -> None:
    got = ev(expr)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize(("expr", "want"), ERRORS)
def test_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        ev(expr)
    assert exc.value.message == want


def test_no_overload() -> None:
    with pytest.raises(engine.CELError, match="found no matching overload for 'isSemver' applied to"):
        engine.compile_with("isSemver([1, 2, 3])", ())
