"""PodDisruptionBudget arithmetic shared by the eviction subresource and the disruption
controller (``pkg/controller/disruption`` and ``pkg/registry/core/pod/storage/eviction.go``).
Pure functions over plain objects."""

from __future__ import annotations

import math

from mockkube.machinery import errors
from mockkube.machinery.selectors import label_selector_from_object

DISRUPTION_ALLOWED = "DisruptionAllowed"
EVICTION_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


def selects(pdb: dict, pod: dict) -> bool:
    try:
        sel = label_selector_from_object((pdb.get("spec") or {}).get("selector"))
    except errors.APIError:
        return False
    return sel.matches((pod.get("metadata") or {}).get("labels") or {})


def pod_ready(pod: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


def _scaled(value, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        v = int(value[:-1]) * total / 100
        return math.ceil(v) if round_up else math.floor(v)
    return int(value)


def compute_status(pdb: dict, pods: list[dict], expected: int, now_rfc: str) -> dict:
    """The status the disruption controller writes for these (selected, non-terminal) pods."""
    spec = pdb.get("spec") or {}
    old = pdb.get("status") or {}
    live = {p["metadata"]["name"]: p for p in pods}
    disrupted = {
        n: t
        for n, t in (old.get("disruptedPods") or {}).items()
        if n in live and not live[n]["metadata"].get("deletionTimestamp")
    }
    healthy = sum(
        1
        for p in pods
        if pod_ready(p) and not p["metadata"].get("deletionTimestamp") and p["metadata"]["name"] not in disrupted
    )
    if spec.get("maxUnavailable") is not None:
        desired = max(expected - _scaled(spec["maxUnavailable"], expected, True), 0)
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected, True)
    else:
        desired = expected
    allowed = max(healthy - desired, 0)
    cond_old = next((c for c in old.get("conditions") or () if c.get("type") == DISRUPTION_ALLOWED), None)
    status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
    cond = {
        "type": DISRUPTION_ALLOWED,
        "status": status,
        "reason": reason,
        "message": "",
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "lastTransitionTime": cond_old["lastTransitionTime"]
        if cond_old and cond_old.get("status") == status
        else now_rfc,
    }
    out = {
        "observedGeneration": pdb["metadata"].get("generation", 1),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [cond],
    }
    if disrupted:
        out["disruptedPods"] = disrupted
    return out


def too_many(cause: str, retry_after: int = 0) -> errors.APIError:
    details: dict = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.APIError(
        429,
        "TooManyRequests",
        EVICTION_MESSAGE,
        details,
        headers={"Retry-After": str(retry_after)} if retry_after else None,
    )


def check_eviction(pdb: dict, pod: dict) -> dict | None:
    """Raise the eviction's refusal, or return the PDB status after this eviction (None:
    the budget is not charged, e.g. an unready pod under AlwaysAllow)."""
    name = pdb["metadata"]["name"]
    status = pdb.get("status") or {}
    policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
    if not pod_ready(pod):
        if policy == "AlwaysAllow":
            return None
        if status.get("currentHealthy", 0) >= status.get("desiredHealthy", 0) and status.get(
            "observedGeneration", 0
        ) >= pdb["metadata"].get("generation", 1):
            return None
    if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
        raise too_many(f"The disruption budget {name} is still being processed by the server.", 10)
    if status.get("disruptionsAllowed", 0) < 0:
        raise errors.forbidden("poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative")
    if status.get("disruptionsAllowed", 0) == 0:
        raise too_many(
            f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods and "
            f"has {status.get('currentHealthy', 0)} currently"
        )
    new = dict(status)
    new["disruptionsAllowed"] = status["disruptionsAllowed"] - 1
    return new
