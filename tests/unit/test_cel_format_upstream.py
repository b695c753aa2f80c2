"""Kubernetes' format CEL library: cases ported from kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/cel/library/format_test.go (expected values)."""

from __future__ import annotations

import pytest

from mockkube.cel import engine
from mockkube.cel.k8slib import FORMAT

LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

# (expression, None for optional.none() or the list of errors)
VALIDATE = [
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("apiextensions.k8s.io")', None),
    ('format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', None),
    ('format.dns1123LabelPrefix().validate("my-label-prefix-")', None),
    ('format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', None),
    ('format.dns1035LabelPrefix().validate("my-label-prefix-")', None),
    ('format.uri().validate("http://example.com")', None),
    ('format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', None),
    ('format.byte().validate("aGVsbG8=")', None),
    ('format.date().validate("2021-01-01")', None),
    ('format.datetime().validate("2021-01-01T00:00:00Z")', None),
    ('format.dns1123Label().validate("contains a space")', [LABEL]),
    ('format.dns1123Subdomain().validate("contains a space")', [SUBDOMAIN]),
    ('format.dns1035Label().validate("contains a space")', [DNS1035]),
    ('format.qualifiedName().validate("contains a space")', [QUALIFIED]),
    ('format.dns1123LabelPrefix().validate("contains a space-")', [LABEL]),
    ('format.dns1123SubdomainPrefix().validate("contains a space-")', [SUBDOMAIN]),
    ('format.dns1035LabelPrefix().validate("contains a space-")', [DNS1035]),
    ('format.dns1123Label().validate("my-label-name")', None),
    ('format.dns1123Subdomain().validate("example.com")', None),
    ('format.dns1035Label().validate("my-label-name")', None),
    ('format.qualifiedName().validate("my.name")', None),
    ('format.byte().validate("aGVsbG8")', ["invalid base64"]),
    ('format.date().validate("2020-01-01")', None),
    ('format.date().validate("2020-01-32")', ["invalid date"]),
    ('format.datetime().validate("2020-01-01T00:00:00Z")', None),
    ('format.datetime().validate("2020-01-32T00:00:00Z")', ["invalid datetime"]),
    ('format.labelValue().validate("my-cool-label-Value")', None),
    ('format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', [LABEL_VALUE]),
]

NAMES = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
]


def ev(expr: str) -> object:
    return engine.compile_with(expr, (("format", "format_lib"),)).evaluate({"format": FORMAT})


@pytest.mark.parametrize(("expr", "want"), VALIDATE)
def test_validate(expr: str, want: list | None) -> None:
    got = ev(expr)
    assert got.present is (want is not None)
    if want is not None:
        assert got.value == want


@pytest.mark.parametrize("name", NAMES)
def test_named_lookup_and_comparison(name: str) -> None:
    assert ev(f'format.named("{name}").hasValue()') is True
    assert ev(f'format.named("{name}").value() == format.{name}()') is True
    other = NAMES[(NAMES.index(name) + 1) % len(NAMES)]
    assert ev(f"format.{name}() == format.{other}()") is False


def test_unknown_format() -> None:
    assert ev('format.named("unknown").hasValue()') is False
