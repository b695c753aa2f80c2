"""Kubernetes' IP and CIDR CEL libraries: cases ported from kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/cel/library/ip_test.go and cidr_test.go (expected values,
and the start of each expected error text: Go's parser detail after it is not reproduced),
and from google/cel-spec's tests/simple/testdata/network_ext.textproto."""

from __future__ import annotations

import pytest

from mockkube.cel import engine
from mockkube.cel.k8slib import CIDR, IP


def ev(expr: str) -> object:
    return engine.compile_with(expr, ()).evaluate({})


VALUES = [
    # ip_test.go
    ('isIP("192.168.0.1")', True),
    ('isIP("192.168.0.1.0")', False),
    ('ip.isCanonical("127.0.0.1")', True),
    ('ip("192.168.0.1").family()', 4),
    ('ip("0.0.0.0").isUnspecified()', True),
    ('ip("127.0.0.1").isUnspecified()', False),
    ('ip("127.0.0.1").isLoopback()', True),
    ('ip("1.2.3.4").isLoopback()', False),
    ('ip("224.0.0.1").isLinkLocalMulticast()', True),
    ('ip("224.0.1.1").isLinkLocalMulticast()', False),
    ('ip("169.254.169.254").isLinkLocalUnicast()', True),
    ('ip("192.168.0.1").isLinkLocalUnicast()', False),
    ('ip("192.168.0.1").isGlobalUnicast()', True),
    ('ip("255.255.255.255").isGlobalUnicast()', False),
    ('isIP("2001:db8::68")', True),
    ('isIP("2001:db8:::68")', False),
    ('ip.isCanonical("2001:db8::68")', True),
    ('ip.isCanonical("2001:DB8::68")', False),
    ('ip("2001:db8::68").family()', 6),
    ('ip("::").isUnspecified()', True),
    ('ip("::1").isUnspecified()', False),
    ('ip("::1").isLoopback()', True),
    ('ip("2001:db8::abcd").isLoopback()', False),
    ('ip("ff02::1").isLinkLocalMulticast()', True),
    ('ip("fd00::1").isLinkLocalMulticast()', False),
    ('ip("fe80::1").isLinkLocalUnicast()', True),
    ('ip("fd80::1").isLinkLocalUnicast()', False),
    ('ip("2001:db8::abcd").isGlobalUnicast()', True),
    ('ip("ff00::1").isGlobalUnicast()', False),
    ('string(ip("192.168.0.1"))', "192.168.0.1"),
    ('type(ip("192.168.0.1")) == net.IP', True),
    ('ip("192.168.0.1") == ip("192.168.0.1")', True),
    # cidr_test.go
    ('cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', True),
    ('cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', False),
    ('cidr("192.168.0.0/24").containsIP("192.168.0.1")', True),
    ('cidr("192.168.0.0/24").containsIP("192.168.1.1")', False),
    ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', True),
    ('cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', False),
    ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', True),
    ('cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', False),
    ('cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', True),
    ('cidr("192.168.0.0/24").masked() == cidr("192.168.0.0/24")', True),
    ('cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', True),
    ('cidr("192.168.0.0/24").prefixLength()', 24),
    ('cidr(dyn("192.168.0.0/24")) == cidr("192.168.0.0/24")', True),
    ('cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', True),
    ('cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', False),
    ('cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', True),
    ('cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', False),
    ('cidr("2001:db8::/32").ip() == ip("2001:db8::")', True),
    ('cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', True),
    ('cidr("2001:db8::/32").prefixLength()', 32),
    ('string(cidr("192.168.0.0/24"))', "192.168.0.0/24"),
    ('type(cidr("192.168.0.0/24")) == net.CIDR', True),
    # network_ext.textproto: equality keeps the address as written
    ("cidr('127.0.0.1/24') == cidr('127.0.0.1/24')", True),
    ("cidr('127.0.0.1/24') == cidr('127.0.0.0/24')", False),
    ("ip('2001:db8::1') == ip('2001:DB8::1')", True),
]

ERRORS = [
    ('ip("192.168.0.1.0")', 'IP Address "192.168.0.1.0" parse error during conversion from string'),
    ('ip.isCanonical("127.0.0.1.0")', 'IP Address "127.0.0.1.0" parse error during conversion from string'),
    ('ip("2001:db8:::68")', 'IP Address "2001:db8:::68" parse error during conversion from string'),
    (
        'cidr("192.168.0.0/")',
        "network address parse error during conversion from string: "
        "network address parse error during conversion from string",
    ),
    ("ip('fe80::1%en0')", 'IP address "fe80::1%en0" with zone value is not allowed'),
    ("ip('::ffff:192.168.0.1')", 'IPv4-mapped IPv6 address "::ffff:192.168.0.1" is not allowed'),
    ("cidr('fe80::1%en0/24')", 'CIDR "fe80::1%en0/24" with zone value is not allowed'),
    ("cidr('::ffff:192.168.0.1/24')", 'IPv4-mapped IPv6 address "::ffff:192.168.0.1/24" is not allowed'),
]

CHECK_ERRORS = [
    ('isIP(cidr("192.168.0.0/24"))', "found no matching overload for 'isIP' applied to '(net.CIDR)'"),
    ("cidr(192168)", "found no matching overload for 'cidr' applied to '(int)'"),
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


@pytest.mark.parametrize(("expr", "want"), CHECK_ERRORS)
def test_check_error(expr: str, want: str) -> None:
    with pytest.raises(engine.CELError) as exc:
        engine.compile_with(expr, ())
    assert want in exc.value.message


def test_parsed_values() -> None:
    assert ev('ip("192.168.0.1")') == IP("192.168.0.1")
    assert ev('cidr("2001:db8::/32")') == CIDR("2001:db8::/32")
