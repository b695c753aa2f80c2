"""The pure part of the resourcepoolstatusrequest controller (upstream
pkg/controller/resourcepoolstatusrequest, KEP-5677 as v1.36 has it): a request's status from
the ResourceSlices and ResourceClaims seen now."""

from __future__ import annotations

from typing import Iterable

LIMIT_DEFAULT = 100
VALIDATION_ERROR_MAX_BYTES = 256
COMPLETED_TTL = 3600.0  # a request with a Complete or Failed condition is deleted after an hour
PENDING_TTL = 86400.0  # one never completed, a day after its creation
MAX_RETRIES = 5  # incomplete pools: requeued this many times, then left pending


def _spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def pool_status(request: dict, slices: Iterable[dict], claims: Iterable[dict], now: str) -> dict:
    """upstream calculatePoolStatus: the request's driver's pools (one pool name when
    ``spec.poolName`` is set), counted at their newest generation, sorted by driver and pool,
    the first ``spec.limit``; a pool with fewer slices than it announces gets a
    validationError and no counts. unavailableDevices is 0 (v1.36 does not look at taints)."""
    spec = _spec(request)
    driver = spec.get("driver") or ""
    only = spec.get("poolName") or ""
    mine = [
        s
        for s in slices
        if _spec(s).get("driver") == driver and (not only or (_spec(s).get("pool") or {}).get("name") == only)
    ]
    newest: dict[str, int] = {}
    for s in mine:
        pool = _spec(s).get("pool") or {}
        name, gen = pool.get("name", ""), int(pool.get("generation") or 0)
        newest[name] = max(newest.get(name, gen), gen)
    pools: dict[str, dict] = {}
    for s in mine:
        sp = _spec(s)
        pool = sp.get("pool") or {}
        name = pool.get("name", "")
        if int(pool.get("generation") or 0) < newest[name]:
            continue
        node = sp.get("nodeName") or ""
        info = pools.get(name)
        if info is None:
            pools[name] = {
                "node": node,
                "mixed": False,
                "devices": len(sp.get("devices") or ()),
                "slices": 1,
                "expected": int(pool.get("resourceSliceCount") or 0),
                "generation": newest[name],
            }
        else:
            info["devices"] += len(sp.get("devices") or ())
            info["slices"] += 1
            info["mixed"] = info["mixed"] or node != info["node"]
    allocated: dict[str, int] = {}
    for claim in claims:
        alloc = (claim.get("status") or {}).get("allocation")
        if not alloc:
            continue
        for r in (alloc.get("devices") or {}).get("results") or ():
            key = f"{r.get('driver', '')}/{r.get('pool', '')}"
            allocated[key] = allocated.get(key, 0) + 1
    out = []
    for name in sorted(pools):
        info = pools[name]
        entry: dict = {"driver": driver, "poolName": name, "generation": info["generation"]}
        if info["node"] and not info["mixed"]:
            entry["nodeName"] = info["node"]
        if info["slices"] < info["expected"]:
            msg = (
                f"pool {driver}/{name} is incomplete: observed {info['slices']}/{info['expected']} "
                f"slices at generation {info['generation']}"
            )
            entry["validationError"] = msg.encode()[:VALIDATION_ERROR_MAX_BYTES].decode(errors="ignore")
        else:
            used = allocated.get(f"{driver}/{name}", 0)
            entry.update(
                {
                    "resourceSliceCount": info["slices"],
                    "totalDevices": info["devices"],
                    "allocatedDevices": used,
                    "availableDevices": max(0, info["devices"] - used),
                    "unavailableDevices": 0,
                }
            )
        out.append(entry)
    count = len(out)
    limit = spec.get("limit") or LIMIT_DEFAULT
    out = out[:limit]
    incomplete = sum(1 for p in out if "validationError" in p)
    message = f"Calculated status for {len(out)} pools"
    if incomplete:
        message += f" ({incomplete} incomplete)"
    status: dict = {"poolCount": count}
    if out:
        status["pools"] = out
    status["conditions"] = [
        {
            "type": "Complete",
            "status": "True",
            "lastTransitionTime": now,
            "reason": "CalculationComplete",
            "message": message,
        }
    ]
    return status


def has_incomplete(status: dict) -> bool:
    return any("validationError" in p for p in status.get("pools") or ())


def expires_at(request: dict, parse_time) -> float | None:
    """When the TTL cleanup deletes ``request``: an hour after its Complete or Failed
    condition, a day after creation while it has none."""
    for cond in (request.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            try:
                return parse_time(cond.get("lastTransitionTime") or "") + COMPLETED_TTL
            except ValueError:
                return None
    created = (request.get("metadata") or {}).get("creationTimestamp")
    try:
        return parse_time(created) + PENDING_TTL if created else None
    except ValueError:
        return None
