"""resource.k8s.io/v1 defaulting (pkg/apis/resource/v1/defaults.go) plus the quantity
canonicalisation a real server's decode/encode round trip performs.

Everything mutates in place and returns the object. ``now`` (RFC 3339, second precision)
is passed in rather than read from a clock: device taints get ``timeAdded`` from it, as
upstream's SetDefaults_DeviceTaint does with time.Now().Truncate(time.Second). When ``now``
is None, taints are left alone (the caller may stamp them later).
"""

from __future__ import annotations

from typing import Any

from mockkube.machinery.quantity import parse_quantity


def _canon(value: Any) -> Any:
    """Canonical quantity string; unparsable values are left for validation to report."""
    try:
        return parse_quantity(value).canonical()
    except ValueError:
        return value


def _canon_map(m: Any, sub: str | None = None) -> None:
    if not isinstance(m, dict):
        return
    for k, v in m.items():
        if sub is None:
            m[k] = _canon(v)
        elif isinstance(v, dict) and sub in v:
            v[sub] = _canon(v[sub])


def _default_request_mode(r: dict) -> None:
    if not r.get("allocationMode"):
        r["allocationMode"] = "ExactCount"
    if r["allocationMode"] == "ExactCount" and not r.get("count"):
        r["count"] = 1
    cap = r.get("capacity")
    if isinstance(cap, dict):
        _canon_map(cap.get("requests"))


def _default_taint(t: dict, now: str | None) -> None:
    if t.get("timeAdded") is None and now is not None:
        t["timeAdded"] = now


def default_claim_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    for req in devices.get("requests") or []:
        if not isinstance(req, dict):
            continue
        if isinstance(req.get("exactly"), dict):
            _default_request_mode(req["exactly"])
        for sub in req.get("firstAvailable") or []:
            if isinstance(sub, dict):
                _default_request_mode(sub)


def default_device_class(obj: dict, now: str | None = None) -> dict:
    return obj


def default_resource_claim(obj: dict, now: str | None = None) -> dict:
    default_claim_spec(obj.get("spec"))
    status = obj.get("status")
    if isinstance(status, dict):
        alloc = status.get("allocation")
        if isinstance(alloc, dict):
            for r in (alloc.get("devices") or {}).get("results") or []:
                if isinstance(r, dict):
                    _canon_map(r.get("consumedCapacity"))
    return obj


def default_resource_claim_template(obj: dict, now: str | None = None) -> dict:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_claim_spec(spec.get("spec"))
    return obj


def _default_device(d: dict, now: str | None) -> None:
    for t in d.get("taints") or []:
        if isinstance(t, dict):
            _default_taint(t, now)
    caps = d.get("capacity")
    if isinstance(caps, dict):
        for cap in caps.values():
            if not isinstance(cap, dict):
                continue
            if "value" in cap:
                cap["value"] = _canon(cap["value"])
            pol = cap.get("requestPolicy")
            if isinstance(pol, dict):
                if pol.get("default") is not None:
                    pol["default"] = _canon(pol["default"])
                if isinstance(pol.get("validValues"), list):
                    pol["validValues"] = [_canon(v) for v in pol["validValues"]]
                rng = pol.get("validRange")
                if isinstance(rng, dict):
                    for k in ("min", "max", "step"):
                        if rng.get(k) is not None:
                            rng[k] = _canon(rng[k])
    for cons in d.get("consumesCounters") or []:
        if isinstance(cons, dict):
            _canon_map(cons.get("counters"), "value")
    mappings = d.get("nodeAllocatableResourceMappings")
    if isinstance(mappings, dict):
        for m in mappings.values():
            if not isinstance(m, dict):
                continue
            if m.get("allocationMultiplier") is None:
                m["allocationMultiplier"] = "1"
            else:
                m["allocationMultiplier"] = _canon(m["allocationMultiplier"])


def default_resource_slice(obj: dict, now: str | None = None) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    for d in spec.get("devices") or []:
        if isinstance(d, dict):
            _default_device(d, now)
    for cs in spec.get("sharedCounters") or []:
        if isinstance(cs, dict):
            _canon_map(cs.get("counters"), "value")
    return obj


def default_device_taint_rule(obj: dict, now: str | None = None) -> dict:
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("taint"), dict):
        _default_taint(spec["taint"], now)
    return obj
