"""Consumable capacity (KEP-5075): how much of each device capacity a request consumes,
rounded by the capacity's requestPolicy, and whether it still fits.

A request names capacities (`capacity.requests`); a capacity it does not name consumes
the policy default or, without one, the whole capacity. validRange rounds up to min and
then to the next step; validValues rounds up to the next listed value. A device with
allowMultipleAllocations can be shared while the sum of consumed capacity stays within
its capacity; each share gets a shareID and records consumedCapacity.
"""

from __future__ import annotations

from mockkube.dra.pools import DeviceInfo
from mockkube.dra.qty import Quantity, q


class CapacityRequestError(Exception):
    """A request that can never be satisfied (aborts allocation, as upstream)."""


def resolve_requests(requests: dict | None, device: DeviceInfo) -> dict[str, Quantity] | None:
    """Request names resolved to the device's fully-qualified capacity names; None when the
    device lacks a requested capacity (skip the device)."""
    if not requests:
        return {}
    caps = device.capacity()
    out: dict[str, Quantity] = {}
    driver = device.driver
    raw = device.device.get("capacity") or {}
    for name, value in requests.items():
        if name in raw:
            fq = name if "/" in name else f"{driver}/{name}"
        elif "/" in name:
            domain, _, ident = name.partition("/")
            if domain != driver or ident not in raw:
                return None
            fq = name
        else:
            fq = f"{driver}/{name}"
            if fq not in raw:
                return None
        if fq in out:
            raise CapacityRequestError(f"capacity {name.rpartition('/')[2]!r} requested twice")
        if fq not in caps:
            return None
        out[fq] = q(value)
    return out


def _round_up(requested: Quantity, policy: dict | None) -> Quantity:
    if policy is None:
        return requested
    rng = policy.get("validRange")
    if rng is not None and rng.get("min") is not None:
        lo = q(rng["min"])
        if requested.cmp(lo) < 0:
            return lo
        if rng.get("step") is None:
            return requested
        step = q(rng["step"])
        # exact arithmetic on (mantissa, exponent) pairs
        rm, re_ = requested.as_exact()
        lm, le = lo.as_exact()
        sm, se = step.as_exact()
        e = min(re_, le, se)
        r, lo_i, st = rm * 10 ** (re_ - e), lm * 10 ** (le - e), sm * 10 ** (se - e)
        n = -(-(r - lo_i) // st)
        return Quantity(lo_i + st * n, e, step.format)
    values = policy.get("validValues")
    if values:
        for v in values:
            qv = q(v)
            if requested.cmp(qv) <= 0:
                return qv
    return requested


def consumed_amount(requested: Quantity | None, total: Quantity, policy: dict | None) -> Quantity:
    """calculateConsumedQuantity."""
    if requested is None:
        if policy is not None and policy.get("default") is not None:
            return q(policy["default"])
        return total
    return _round_up(requested, policy)


def violates_policy(amount: Quantity, policy: dict | None) -> bool:
    if policy is None:
        return False
    if policy.get("default") is not None and amount == q(policy["default"]):
        return False
    rng = policy.get("validRange")
    if rng is not None:
        if rng.get("max") is not None and amount.cmp(q(rng["max"])) > 0:
            return True
        if rng.get("step") is not None and rng.get("min") is not None:
            lo, step = q(rng["min"]), q(rng["step"])
            am, ae = amount.as_exact()
            lm, le = lo.as_exact()
            sm, se = step.as_exact()
            e = min(ae, le, se)
            if (am * 10 ** (ae - e) - lm * 10 ** (le - e)) % (sm * 10 ** (se - e)):
                return True
        return False
    values = policy.get("validValues")
    if values:
        return not any(amount == q(v) for v in values)
    return False


def consumption_for(device: DeviceInfo, requests: dict | None) -> dict[str, Quantity] | None:
    """fully-qualified capacity name -> amount this request consumes on the device, or None
    when the device cannot serve the request (missing capacity or policy violated)."""
    resolved = resolve_requests(requests, device)
    if resolved is None:
        return None
    out: dict[str, Quantity] = {}
    for fq, (total, policy, _published) in device.capacity().items():
        amount = consumed_amount(resolved.get(fq), total, policy)
        if amount.sign() < 0:
            raise CapacityRequestError(f"capacity {fq!r}: capacity value is negative")
        if violates_policy(amount, policy):
            return None
        out[fq] = amount
    return out


def fits(device: DeviceInfo, amounts: dict[str, Quantity], *in_use: dict[str, Quantity] | None) -> bool:
    """Whether `amounts` plus everything in `in_use` stays within each capacity."""
    for fq, (total, _policy, _published) in device.capacity().items():
        used = amounts.get(fq)
        if used is None:
            continue
        for other in in_use:
            if other and fq in other:
                used = used + other[fq]
        if used.cmp(total) > 0:
            return False
    return True


def status_names(device: DeviceInfo, amounts: dict[str, Quantity]) -> dict[str, str]:
    """consumedCapacity for the claim status, keyed as the device publishes each name."""
    caps = device.capacity()
    return {caps[fq][2]: amount.canonical() for fq, amount in amounts.items()}


def add_into(target: dict[str, Quantity], amounts: dict[str, Quantity]) -> None:
    for k, v in amounts.items():
        target[k] = target[k] + v if k in target else v


def sub_from(target: dict[str, Quantity], amounts: dict[str, Quantity]) -> None:
    for k, v in amounts.items():
        if k in target:
            target[k] = target[k] - v
