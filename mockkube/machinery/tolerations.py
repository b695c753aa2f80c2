"""Taints and tolerations (v1.Toleration.ToleratesTaint): shared by the scheduler, the
DaemonSet controller and the taint-eviction paths."""

from __future__ import annotations


def toleration_matches(tol: dict, taint: dict) -> bool:
    """v1.Toleration.ToleratesTaint."""
    effect = tol.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = tol.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.get("value") or "") == (taint.get("value") or "")
    return False


def tolerated(tolerations: list[dict], taint: dict) -> bool:
    return any(toleration_matches(t, taint) for t in tolerations)
