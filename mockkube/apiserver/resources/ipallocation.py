"""The Service REST storage's ClusterIP allocation through ServiceCIDRs and IPAddresses
(``mockkube/rules/ipallocator.py`` decides): a create picks or checks the ClusterIP
(``ServiceStrategy.admit``), the committed Service gets its IPAddress, and a deleted Service
releases it."""

from __future__ import annotations

from typing import Any

from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.machinery.registry import ResourceType
from mockkube.rules import ipallocator as ipa


def _rts(res: Any) -> tuple[ResourceType | None, ResourceType | None]:
    return (
        res.registry.get("networking.k8s.io", "v1", "servicecidrs"),
        res.registry.get("networking.k8s.io", "v1", "ipaddresses"),
    )


def _needs_ip(svc: dict) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None"


def allocate(svc: dict, res: Any) -> None:
    """On create: pick a ClusterIP from the ServiceCIDRs, or check the one asked for (422 as
    upstream's allocator when it is out of range or taken). Without ServiceCIDRs (none
    stored), the strategy's own choice stands."""
    cidr_rt, ip_rt = _rts(res)
    if cidr_rt is None or ip_rt is None or not _needs_ip(svc):
        return
    ranges = ipa.active_ranges(res.store.objects(cidr_rt))
    if not ranges:
        return
    spec = svc["spec"]
    taken = {o["metadata"]["name"] for o in res.store.objects(ip_rt)}
    m = svc.get("metadata") or {}
    wanted = spec.get("clusterIP") or ((spec.get("clusterIPs") or [None])[0])
    if wanted:
        why = ""
        if not ipa.in_ranges(wanted, ranges):
            valid = ",".join(str(n) for n in ranges)
            why = (
                f"failed to allocate IP {wanted}: the provided IP ({wanted}) is not in the valid range. "
                f"The range of valid IPs is {valid}"
            )
        elif wanted in taken:
            why = f"failed to allocate IP {wanted}: provided IP is already allocated"
        if why:
            raise errors.invalid("Service", "", m.get("name", ""), [fe.invalid("spec.clusterIPs", [wanted], why)])
        return
    ip = ipa.pick(ranges, taken, m.get("uid", ""))
    if ip is None:
        raise errors.internal("failed to allocate a serviceIP: range is full")
    spec["clusterIP"] = ip
    spec["clusterIPs"] = [ip]


def after_commit(res: Any):
    """The listener the server adds to ``Resources.after_commit``."""

    def on_commit(rt: ResourceType, verb: str, obj: dict) -> None:
        if rt.group != "" or rt.plural != "services" or verb not in ("create", "delete"):
            return
        cidr_rt, ip_rt = _rts(res)
        if ip_rt is None or not _needs_ip(obj):
            return
        for ip in (obj.get("spec") or {}).get("clusterIPs") or ():
            cur = res.store.get(ip_rt, "", ip)
            if verb == "create":
                if (
                    cur is None
                    and cidr_rt is not None
                    and ipa.in_ranges(ip, ipa.active_ranges(res.store.objects(cidr_rt)))
                ):
                    res.create(ip_rt, "", ipa.ip_address_object(ip, obj))
            elif cur is not None:
                ref = (cur.obj.get("spec") or {}).get("parentRef") or {}
                m = obj.get("metadata") or {}
                if (ref.get("resource"), ref.get("namespace"), ref.get("name")) == (
                    "services",
                    m.get("namespace"),
                    m.get("name"),
                ):
                    try:
                        res.delete(ip_rt, "", ip, None)
                    except errors.APIError as e:
                        if e.code != 404:
                            raise

    return on_commit
