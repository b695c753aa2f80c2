"""More Kubernetes CEL libraries: regex, urls, ip/cidr, list extras and optionals.

Registered into the engine's one function table on import (``mockkube.cel``
imports this), so DRA selectors, CRD rules and admission policies see the same set.
Names, receivers and results follow ``k8s.io/apiserver/pkg/cel/library``.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from mockkube.cel import engine
from mockkube.cel.celtypes import parse_timestamp
from mockkube.cel.lib import CELRuntimeError

optional_type = engine.optional_type  # the engine owns it: `.?f` and `[?k]` build optionals


def _opt_value(o: optional_type) -> Any:
    if not o.present:
        raise CELRuntimeError("optional.none() dereference")
    return o.value


# -- urls ------------------------------------------------------------------------------------


class URL:
    __slots__ = ("parts",)

    def __init__(self, text: str) -> None:
        if not _is_url(text):
            raise CELRuntimeError(f"URL parse error during conversion from string: {text}")
        self.parts = urlsplit(text)


URL.__name__ = "url"


def _is_url(text: str) -> bool:
    try:
        p = urlsplit(text)
    except ValueError:
        return False
    host = p.netloc.rsplit("@", 1)[-1]
    # Go's url.Parse: after the host, only ":" and digits (validOptionalPort)
    port = host.rsplit("]", 1)[1] if host.startswith("[") else (host[host.rfind(":") :] if ":" in host else "")
    if port and (port[0] != ":" or not port[1:].isdigit() and port != ":"):
        return False
    return bool(p.scheme) or text.startswith("/")


# Go's url.validEncoded(s, encodePath): what an escaped path may hold as it is
_PATH_OK = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@[]/%")


def _escaped_path(u: URL) -> str:
    """Go's URL.EscapedPath: the path as written when that is a valid encoding, else the
    path escaped as Go's encodePath does."""
    raw = u.parts.path
    if all(c in _PATH_OK for c in raw):
        return raw
    from urllib.parse import quote, unquote

    return quote(unquote(raw), safe="$&+,/:;=@-._~")


def _hostname(u: URL) -> str:
    h = u.parts.hostname or ""
    return h


def _port(u: URL) -> str:
    net = u.parts.netloc.rsplit("@", 1)[-1]
    if net.startswith("["):
        return net.rsplit("]:", 1)[1] if "]:" in net else ""
    return net.rsplit(":", 1)[1] if ":" in net else ""


def _query(u: URL) -> dict:
    out: dict[str, list[str]] = {}
    from urllib.parse import parse_qsl

    for k, v in parse_qsl(u.parts.query, keep_blank_values=True):
        out.setdefault(k, []).append(v)
    return out


# -- ip / cidr -------------------------------------------------------------------------------


def _q(text: str) -> str:
    """Go's %q of a string (Kubernetes' error messages quote the input so)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class IP:
    __slots__ = ("addr",)

    def __init__(self, text: str) -> None:
        if "%" in text:
            raise CELRuntimeError(f"IP address {_q(text)} with zone value is not allowed")
        try:
            self.addr = ipaddress.ip_address(text)
        except ValueError:
            raise CELRuntimeError(
                f"IP Address {_q(text)} parse error during conversion from string: ParseAddr({_q(text)})"
            ) from None
        if self.addr.version == 6 and self.addr.ipv4_mapped is not None:
            raise CELRuntimeError(f"IPv4-mapped IPv6 address {_q(text)} is not allowed")

    def __eq__(self, other: object) -> bool:
        return type(other) is IP and other.addr == self.addr

    def __hash__(self) -> int:
        return hash(self.addr)

    def __str__(self) -> str:
        return str(self.addr)


IP.__name__ = "net.IP"


class CIDR:
    __slots__ = ("net", "ip")

    def __init__(self, text: str) -> None:
        if "%" in text:
            raise CELRuntimeError(f"CIDR {_q(text)} with zone value is not allowed")
        try:
            self.net = ipaddress.ip_network(text, strict=False)
            self.ip = ipaddress.ip_address(text.split("/")[0])
        except ValueError:
            raise CELRuntimeError(
                "network address parse error during conversion from string: "
                f"network address parse error during conversion from string: netip.ParsePrefix({_q(text)})"
            ) from None
        if self.ip.version == 6 and self.ip.ipv4_mapped is not None:
            raise CELRuntimeError(f"IPv4-mapped IPv6 address {_q(text)} is not allowed")

    def __eq__(self, other: object) -> bool:
        # netip.Prefix equality: the address as written and the prefix length
        return type(other) is CIDR and other.ip == self.ip and other.net.prefixlen == self.net.prefixlen

    def __hash__(self) -> int:
        return hash((self.ip, self.net.prefixlen))

    def __str__(self) -> str:
        return f"{self.ip}/{self.net.prefixlen}"


CIDR.__name__ = "net.CIDR"


_LINK_LOCAL_MC4 = ipaddress.ip_network("224.0.0.0/24")


def _is_global_unicast(i: IP) -> bool:
    """Go's netip.Addr.IsGlobalUnicast: private ranges count, the special ones do not."""
    a = i.addr
    if a.version == 4 and int(a) == 0xFFFFFFFF:
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


def _is_link_local_multicast(i: IP) -> bool:
    a = i.addr
    if a.version == 4:
        return a in _LINK_LOCAL_MC4
    return (int(a) >> 112) & 0xFF0F == 0xFF02


def _ok(ctor: Any, text: str) -> bool:
    try:
        ctor(text)
        return True
    except CELRuntimeError:
        return False


def _ip_eq(a: Any, b: Any) -> bool:
    return a.addr == b.addr


def _list_last_index(xs: list, v: Any) -> int:
    for i in range(len(xs) - 1, -1, -1):
        if engine.cel_equals(xs[i], v):
            return i
    return -1


def _find(s: str, pattern: str) -> str:
    return engine.regexp(pattern).find(s)


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    return engine.regexp(pattern).find_all(s, n)


# -- format ----------------------------------------------------------------------------------


class FormatLibrary:
    """The ``format`` variable: ``format.dns1123Label()``, ``format.named("uuid")``."""


FormatLibrary.__name__ = "format_lib"
FORMAT = FormatLibrary()


# library/format.go's MaxRegexSize per format: what a validate() call is charged by
_MAX_REGEX_SIZE = {
    "dns1123Label": 30,
    "dns1123Subdomain": 60,
    "dns1035Label": 30,
    "qualifiedName": 60,
    "dns1123LabelPrefix": 30,
    "dns1123SubdomainPrefix": 60,
    "dns1035LabelPrefix": 30,
    "labelValue": 40,
    "uri": 1103,
    "byte": 84,
    "date": 71,  # len(strfmt.DateTimePattern)
    "datetime": 71,
}


class NamedFormat:
    __slots__ = ("name", "check")

    def __init__(self, name: str, check: Any) -> None:
        self.name, self.check = name, check

    @property
    def max_regex_size(self) -> int:
        return _MAX_REGEX_SIZE.get(self.name, 128)

    def validate(self, value: str) -> optional_type:
        errs = self.check(value)
        return optional_type(errs, True) if errs else optional_type()

    def __eq__(self, other: object) -> bool:  # format.named("x").value() == format.x()
        return type(other) is NamedFormat and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


NamedFormat.__name__ = "kubernetes.NamedFormat"


def _format_checks() -> dict:

    from mockkube.machinery import names

    def prefixed(fn: Any) -> Any:
        # apimachinery's maskTrailingDash: "name-" validates as "nama" (the last two characters)
        return lambda v: fn(v[:-2] + "a" if len(v) > 1 and v.endswith("-") else v)

    def uri(v: str) -> list[str]:
        return [] if _is_url(v) else ["an URI"]

    def uuid(v: str) -> list[str]:
        ok = re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", v)
        return [] if ok else ["does not match the UUID format"]

    def byte(v: str) -> list[str]:
        from mockkube.machinery import gobase64

        return ["invalid base64"] if gobase64.error(v) else []

    def parses(fn: Any, v: str) -> bool:
        try:
            fn(v)
            return True
        except CELRuntimeError:
            return False

    def date(v: str) -> list[str]:  # a calendar date (2020-01-32 is not)
        ok = re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) and parses(parse_timestamp, v + "T00:00:00Z")
        return [] if ok else ["invalid date"]

    def datetime_(v: str) -> list[str]:
        return [] if parses(parse_timestamp, v) else ["invalid datetime"]

    return {
        "dns1123Label": names.dns1123_label,
        "dns1123Subdomain": names.dns1123_subdomain,
        "dns1035Label": names.dns1035_label,
        "qualifiedName": names.qualified_name,
        "dns1123LabelPrefix": prefixed(names.dns1123_label),
        "dns1123SubdomainPrefix": prefixed(names.dns1123_subdomain),
        "dns1035LabelPrefix": prefixed(names.dns1035_label),
        "labelValue": names.label_value,
        "uri": uri,
        "uuid": uuid,
        "byte": byte,
        "date": date,
        "datetime": datetime_,
    }


def _named(_lib: Any, name: str) -> optional_type:
    check = _format_checks().get(name)
    return optional_type(NamedFormat(name, check), True) if check else optional_type()


def _format_functions() -> dict:
    out: dict = {
        "named": [("format_lib", ("string",), ("optional_type", "kubernetes.NamedFormat"), _named)],
        "validate": [("kubernetes.NamedFormat", ("string",), "optional_type", lambda f, v: f.validate(v))],
    }
    for name in (
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
    ):
        out[name] = [
            ("format_lib", (), "kubernetes.NamedFormat", lambda _lib, n=name: NamedFormat(n, _format_checks()[n]))
        ]
    return out


_MORE = {
    "hasValue": [("optional_type", (), "bool", lambda o: o.present)],
    "value": [("optional_type", (), "dyn", _opt_value)],
    "orValue": [("optional_type", ("dyn",), "dyn", lambda o, d: o.value if o.present else d)],
    "find": [("string", ("string",), "string", _find)],
    "findAll": [
        ("string", ("string",), ("list", "string"), _find_all),
        ("string", ("string", "int"), ("list", "string"), _find_all),
    ],
    "url": [(None, ("string",), "url", URL)],
    "isURL": [(None, ("string",), "bool", _is_url)],
    "getScheme": [("url", (), "string", lambda u: u.parts.scheme)],
    "getHost": [("url", (), "string", lambda u: u.parts.netloc.rsplit("@", 1)[-1])],
    "getHostname": [("url", (), "string", _hostname)],
    "getPort": [("url", (), "string", _port)],
    "getEscapedPath": [("url", (), "string", _escaped_path)],
    "getQuery": [("url", (), ("map", "string", ("list", "string")), _query)],
    "ip": [(None, ("string",), "net.IP", IP), ("net.CIDR", (), "net.IP", lambda c: IP(str(c.ip)))],
    "isIP": [(None, ("string",), "bool", lambda s: _ok(IP, s))],
    "family": [("net.IP", (), "int", lambda i: i.addr.version)],
    "isUnspecified": [("net.IP", (), "bool", lambda i: i.addr.is_unspecified)],
    "isLoopback": [("net.IP", (), "bool", lambda i: i.addr.is_loopback)],
    "isLinkLocalMulticast": [("net.IP", (), "bool", _is_link_local_multicast)],
    "isLinkLocalUnicast": [("net.IP", (), "bool", lambda i: i.addr.is_link_local and not i.addr.is_multicast)],
    "isGlobalUnicast": [("net.IP", (), "bool", _is_global_unicast)],
    "ip.isCanonical": [(None, ("string",), "bool", lambda s: str(IP(s)) == s)],
    "cidr": [(None, ("string",), "net.CIDR", CIDR)],
    "isCIDR": [(None, ("string",), "bool", lambda s: _ok(CIDR, s))],
    "containsIP": [
        ("net.CIDR", ("net.IP",), "bool", lambda c, i: i.addr in c.net),
        ("net.CIDR", ("string",), "bool", lambda c, s: IP(s).addr in c.net),
    ],
    "containsCIDR": [
        (
            "net.CIDR",
            ("net.CIDR",),
            "bool",
            lambda c, o: o.net.subnet_of(c.net) if o.net.version == c.net.version else False,
        ),
        (
            "net.CIDR",
            ("string",),
            "bool",
            lambda c, s: CIDR(s).net.subnet_of(c.net) if CIDR(s).net.version == c.net.version else False,
        ),
    ],
    "prefixLength": [("net.CIDR", (), "int", lambda c: c.net.prefixlen)],
    "masked": [("net.CIDR", (), "net.CIDR", lambda c: CIDR(str(c.net)))],
}


def register() -> None:
    """Add the libraries to the engine's function table (idempotent)."""
    for name, overloads in list(_MORE.items()) + list(_format_functions().items()):
        have = engine._FUNCTIONS.setdefault(name, [])
        for o in overloads:
            if o not in have:
                have.append(o)
    have = engine._FUNCTIONS.setdefault("lastIndexOf", [])
    extra = ("list", ("dyn",), "int", _list_last_index)
    if extra not in have:
        have.append(extra)
    have = engine._FUNCTIONS.setdefault("string", [])
    for t in ("net.IP", "net.CIDR"):
        if not any(o[1] == (t,) for o in have):
            have.append((None, (t,), "string", str))


register()
