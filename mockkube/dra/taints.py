"""Device taints and tolerations (KEP-5055): which taints a device carries and whether a
request tolerates them. Only NoSchedule and NoExecute keep a device from being allocated;
None (and unknown effects) are informational.
"""

from __future__ import annotations

from typing import Iterable

BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def tolerates(toleration: dict, taint: dict) -> bool:
    """resourceclaim.ToleratesTaint: effect (if set) must match; Exists matches the key (or
    everything with an empty key); Equal (the default) matches key and value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return key == "" or key == taint.get("key")
    if operator == "Equal":
        return key == (taint.get("key") or "") and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def taint_prevents_allocation(taints: Iterable[dict], tolerations: list[dict] | None) -> bool:
    """True when some NoSchedule/NoExecute taint is not tolerated by any toleration."""
    for taint in taints:
        if taint.get("effect") in BLOCKING_EFFECTS:
            if not any(tolerates(t, taint) for t in tolerations or ()):
                return True
    return False


def rule_selects(rule: dict, driver: str, pool: str, device: str) -> bool:
    """Whether a DeviceTaintRule's spec.deviceSelector names this device. Empty fields match
    everything; a rule without a selector matches no device (the v1beta2 API contract)."""
    sel = (rule.get("spec") or {}).get("deviceSelector")
    if sel is None:
        return False
    for field, value in (("driver", driver), ("pool", pool), ("device", device)):
        want = sel.get(field)
        if want and want != value:
            return False
    return True


def rule_taint(rule: dict) -> dict:
    return dict((rule.get("spec") or {}).get("taint") or {})


def effective_taints(device: dict, driver: str, pool: str, rules: Iterable[dict]) -> list[dict]:
    """The device's own taints followed by those of every DeviceTaintRule selecting it."""
    out = [dict(t) for t in device.get("taints") or ()]
    name = device.get("name", "")
    for rule in rules:
        if rule_selects(rule, driver, pool, name):
            out.append(rule_taint(rule))
    return out
