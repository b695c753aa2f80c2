"""Service ClusterIP allocation over ServiceCIDRs, as v1.36's IPAddress-based allocator does it
(``pkg/registry/core/service/ipallocator``, MultiCIDRServiceAllocator GA): an IP is taken when
an IPAddress object names it, a Service's IP must lie in a ServiceCIDR that is not being
deleted, and a new IP is picked from the ranges (the network address and, for IPv4, the
broadcast address excluded). Pure: the caller passes the ServiceCIDRs and taken IPs.

Upstream picks at random; here the first free IP from a start derived from the Service's uid,
so a test run is reproducible."""

from __future__ import annotations

import ipaddress

MANAGED_BY = "ipallocator.k8s.io"
LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
LABEL_IP_FAMILY = "ipaddress.kubernetes.io/ip-family"
DEFAULT_SERVICE_CIDR = "kubernetes"


def active_ranges(service_cidrs: list[dict], family: int = 4) -> list[ipaddress._BaseNetwork]:
    out = []
    for sc in service_cidrs:
        if (sc.get("metadata") or {}).get("deletionTimestamp"):
            continue
        for c in (sc.get("spec") or {}).get("cidrs") or ():
            try:
                net = ipaddress.ip_network(c, strict=False)
            except ValueError:
                continue
            if net.version == family:
                out.append(net)
    return out


def in_ranges(ip: str, ranges: list) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(
        addr in n and addr != n.network_address and (n.version == 6 or addr != n.broadcast_address) for n in ranges
    )


def pick(ranges: list, taken: set[str], seed: str) -> str | None:
    """A free IP: the first at or after a uid-derived offset, range by range."""
    digits = int(seed.replace("-", "") or "0", 16)
    for n in ranges:
        size = n.num_addresses - (2 if n.version == 4 else 1)
        if size <= 0:
            continue
        start = digits % size
        for i in range(min(size, 1 << 20)):
            ip = str(n.network_address + 1 + (start + i) % size)
            if ip not in taken:
                return ip
    return None


def ip_address_object(ip: str, svc: dict) -> dict:
    m = svc.get("metadata") or {}
    family = "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {"name": ip, "labels": {LABEL_IP_FAMILY: family, LABEL_MANAGED_BY: MANAGED_BY}},
        "spec": {
            "parentRef": {
                "group": "",
                "resource": "services",
                "namespace": m.get("namespace", ""),
                "name": m.get("name", ""),
            }
        },
    }
