"""Small builders for allocator tests (plain wire-shaped dicts)."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"
NOW = "2026-01-01T00:00:00Z"


def node(name: str = "n1", labels: dict | None = None) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}}}


def dev(name: str, **attrs: Any) -> dict:
    out: dict = {"name": name, "attributes": {}}
    for k, v in attrs.items():
        key = k.replace("__", "/").replace("_", ".") if "__" in k else k
        if isinstance(v, bool):
            out["attributes"][key] = {"bool": v}
        elif isinstance(v, int):
            out["attributes"][key] = {"int": v}
        else:
            out["attributes"][key] = {"string": v}
    return out


def slice_(
    name: str,
    devices: list[dict],
    *,
    node_name: str | None = "n1",
    pool: str | None = None,
    driver: str = DRIVER,
    generation: int = 1,
    count: int = 1,
    **spec: Any,
) -> dict:
    s: dict = {
        "driver": driver,
        "pool": {"name": pool or node_name or name, "generation": generation, "resourceSliceCount": count},
        "devices": devices,
    }
    if node_name and not any(k in spec for k in ("allNodes", "nodeSelector", "perDeviceNodeSelection")):
        s["nodeName"] = node_name
    s.update(spec)
    return {"metadata": {"name": name}, "spec": s}


def dclass(name: str = "gpu", *exprs: str, driver: str = DRIVER, config: list | None = None, **spec: Any) -> dict:
    sels = [{"cel": {"expression": e}} for e in (exprs or (f'device.driver == "{driver}"',))]
    s: dict = {"selectors": sels}
    if config:
        s["config"] = config
    s.update(spec)
    return {"metadata": {"name": name}, "spec": s}


def req(
    name: str = "gpu", cls: str = "gpu", count: int | None = None, *exprs: str, mode: str | None = None, **extra: Any
) -> dict:
    exactly: dict = {"deviceClassName": cls}
    if count is not None:
        exactly["count"] = count
    if mode:
        exactly["allocationMode"] = mode
    if exprs:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    exactly.update(extra)
    return {"name": name, "exactly": exactly}


def first_available(name: str, *subs: dict) -> dict:
    return {"name": name, "firstAvailable": list(subs)}


def sub(name: str, cls: str = "gpu", count: int = 1, *exprs: str, **extra: Any) -> dict:
    s: dict = {"name": name, "deviceClassName": cls, "count": count, "allocationMode": "ExactCount"}
    if exprs:
        s["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    s.update(extra)
    return s


def claim(
    name: str, *requests: dict, constraints: list | None = None, config: list | None = None, uid: str | None = None
) -> dict:
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {
        "metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}", "resourceVersion": "1"},
        "spec": {"devices": devices},
    }


def picked(outcome: Any, claim_index: int = 0) -> list[str]:
    assert outcome.results is not None, outcome.reason
    return [r["device"] for r in outcome.results[claim_index]["devices"]["results"]]


def attr(a: str) -> str:
    return f'device.attributes["{DRIVER}"].{a}'
