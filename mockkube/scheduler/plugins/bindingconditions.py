"""KEP-5007 device binding conditions: the checks DynamicResources makes on allocated
claims, and the PreBind wait that does not hold up the scheduling of other pods.

Upstream's PreBind polls every 5 s in its own goroutine (the binding cycle runs apart
from the scheduling cycle). Here a pod whose claims carry binding conditions is parked
in ``BindingWaiter``: every change of one of its claims re-evaluates it, and a timer
fires at the deadline. Readiness follows upstream's ``isClaimReadyForBinding`` (every
binding condition True in the claim's ``status.devices``; any failure condition True is
an error) and ``isClaimTimeout`` (``allocationTimestamp`` + bindingTimeout has passed,
on the injectable clock), so a scheduler restart resumes from the claims' state.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from mockkube.machinery import meta

log = logging.getLogger("mockkube.scheduler")

DEFAULT_BINDING_TIMEOUT = 600.0  # DynamicResourcesArgs.bindingTimeout default (10 minutes)
PROFILE = "default-scheduler"
SUCCESS, FAILURE, TIMEOUT = "success", "failure", "timeout"


class BindingFailed(Exception):
    """A binding failure condition is True (the message is upstream's error text)."""


def _results(claim: dict) -> list[dict]:
    alloc = (claim.get("status") or {}).get("allocation") or {}
    return list((alloc.get("devices") or {}).get("results") or ())


def has_binding_conditions(claim: dict) -> bool:
    return any(r.get("bindingConditions") for r in _results(claim))


def device_status(claim: dict, result: dict) -> dict | None:
    """The claim's ``status.devices`` entry for one allocation result (getAllocatedDeviceStatus)."""
    for d in (claim.get("status") or {}).get("devices") or ():
        if (d.get("device"), d.get("driver"), d.get("pool")) == (
            result.get("device"),
            result.get("driver"),
            result.get("pool"),
        ):
            return d
    return None


def _condition(status: dict, typ: str) -> dict | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == typ), None)


def claim_ready(claim: dict) -> bool:
    """isClaimReadyForBinding: True when every binding condition is True; raises
    ``BindingFailed`` when a binding failure condition is True."""
    if not (claim.get("status") or {}).get("allocation"):
        return False
    for r in _results(claim):
        if not r.get("bindingConditions"):
            continue
        st = device_status(claim, r)
        if st is None:
            return False
        for typ in r.get("bindingFailureConditions") or ():
            c = _condition(st, typ)
            if c is not None and c.get("status") == "True":
                raise BindingFailed(
                    f"claim {claim['metadata']['name']} binding failed: "
                    f'reason={c.get("reason", "")}, message="{c.get("message", "")}"'
                )
        for typ in r["bindingConditions"]:
            c = _condition(st, typ)
            if c is None or c.get("status") != "True":
                return False
    return True


def claim_deadline(claim: dict, timeout: float) -> float | None:
    """allocationTimestamp + timeout (seconds since the epoch), None without a timestamp."""
    ts = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")
    if not ts or not has_binding_conditions(claim):
        return None
    try:
        return meta.parse_time(ts) + timeout
    except (ValueError, TypeError):
        return None


def claim_timed_out(claim: dict, now: float, timeout: float) -> bool:
    """isClaimTimeout: the allocation is older than the binding timeout."""
    deadline = claim_deadline(claim, timeout)
    return deadline is not None and deadline < now


def claim_unavailable(claim: dict, now: float, timeout: float) -> bool:
    """Filter's check of an allocated claim: binding failed, or not ready and timed out
    (PostFilter then deallocates it so that other devices can be tried)."""
    try:
        ready = claim_ready(claim)
    except BindingFailed:
        return True
    return not ready and claim_timed_out(claim, now, timeout)


def drivers_of(claims: list[dict]) -> list[str]:
    return sorted({r.get("driver", "") for c in claims for r in _results(c) if r.get("bindingConditions")})


class Metrics:
    """The two KEP-5007 metrics, in the server's prometheus_client registry."""

    def __init__(self, registry: Any) -> None:
        self.allocations = registry.counter(
            "scheduler_dra_bindingconditions_allocations_total",
            "Number of allocations using devices with BindingConditions, counted per driver per scheduling attempt",
            ["profile", "driver", "status"],
        )
        self.prebind = registry.histogram(
            "scheduler_dra_bindingconditions_prebind_duration_seconds",
            "Time in seconds DynamicResources' PreBind took, by outcome and whether BindingConditions were required",
            ["status", "requires_bindingconditions"],
            buckets=[0.1 * 2**i for i in range(14)],
        )
        self.wait = registry.histogram(
            "scheduler_dra_bindingconditions_wait_duration_seconds",
            "Time in seconds spent waiting for BindingConditions to be satisfied during PreBind.",
            ["profile", "driver", "status"],
            buckets=[0.1 * 2**i for i in range(14)],
        )

    def prebind_done(self, status: str, requires: bool, seconds: float) -> None:
        self.prebind.labels(status, "true" if requires else "false").observe(max(0.0, seconds))

    def wait_done(self, drivers: list[str], status: str, seconds: float) -> None:
        for d in drivers:
            self.allocations.labels(PROFILE, d, status).inc()
            self.wait.labels(PROFILE, d, status).observe(max(0.0, seconds))
        self.prebind_done(status, True, seconds)


@dataclass
class Waiting:
    """One pod parked in PreBind."""

    key: str
    claims: list[tuple[str, str]]  # (namespace, name)
    started: float
    drivers: list[str]
    on_done: Callable[[str, str], None]  # (status, error message)
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class BindingWaiter:
    """Pods waiting in PreBind for their claims' binding conditions."""

    def __init__(
        self,
        get_claim: Callable[[str, str], dict | None],
        clock: Callable[[], float],
        timeout: float,
        metrics: Metrics | None,
    ) -> None:
        self.get_claim = get_claim
        self.clock = clock
        self.timeout = timeout
        self.metrics = metrics
        self.waiting: dict[str, Waiting] = {}
        self._by_claim: dict[tuple[str, str], set[str]] = {}

    def __contains__(self, key: str) -> bool:
        return key in self.waiting

    def __len__(self) -> int:
        return len(self.waiting)

    def add(self, key: str, claims: list[dict], on_done: Callable[[str, str], None]) -> None:
        refs = [((c.get("metadata") or {}).get("namespace", ""), c["metadata"]["name"]) for c in claims]
        w = Waiting(key, refs, self.clock(), drivers_of([c for c in claims if has_binding_conditions(c)]), on_done)
        self.waiting[key] = w
        for ref in refs:
            self._by_claim.setdefault(ref, set()).add(key)
        self.evaluate(key)

    def cancel(self, key: str) -> bool:
        w = self.waiting.pop(key, None)
        if w is None:
            return False
        if w.timer is not None:
            w.timer.cancel()
        for ref in w.claims:
            keys = self._by_claim.get(ref)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_claim[ref]
        return True

    def claim_changed(self, claim: dict) -> None:
        m = claim.get("metadata") or {}
        for key in list(self._by_claim.get((m.get("namespace", ""), m.get("name", "")), ())):
            self.evaluate(key)

    def resync(self) -> None:
        """Re-evaluate every wait (after an injected clock moved)."""
        for key in list(self.waiting):
            self.evaluate(key)

    def stop(self) -> None:
        for key in list(self.waiting):
            self.cancel(key)

    def evaluate(self, key: str) -> None:
        """isPodReadyForBinding over the pod's claims, then the overall PreBind timeout."""
        w = self.waiting.get(key)
        if w is None:
            return
        now = self.clock()
        deadline = w.started + self.timeout
        for ns, name in w.claims:
            claim = self.get_claim(ns, name)
            if claim is None or (claim.get("metadata") or {}).get("deletionTimestamp"):
                return self._finish(
                    w,
                    FAILURE,
                    f'resourceclaim "{name}" not found'
                    if claim is None
                    else f'resourceclaim "{name}" is being deleted',
                )
            try:
                if claim_ready(claim):
                    continue
            except BindingFailed as e:
                return self._finish(w, FAILURE, str(e))
            if claim_timed_out(claim, now, self.timeout):
                return self._finish(w, TIMEOUT, f"claim {name} binding timeout")
            d = claim_deadline(claim, self.timeout)
            if d is not None:
                deadline = min(deadline, d)
            break
        else:
            return self._finish(w, SUCCESS, "")
        if now >= deadline:
            return self._finish(w, TIMEOUT, "device binding timeout")
        self._arm(w, deadline - now)

    def _arm(self, w: Waiting, delay: float) -> None:
        if w.timer is not None:
            w.timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # evaluated outside a loop (unit tests): resync drives time
            return
        w.timer = loop.call_later(max(0.0, delay) + 0.001, self.evaluate, w.key)

    def _finish(self, w: Waiting, status: str, message: str) -> None:
        self.cancel(w.key)
        if self.metrics is not None:
            self.metrics.wait_done(w.drivers, status, self.clock() - w.started)
        try:
            w.on_done(status, message)
        except Exception:  # pragma: no cover - a bug in the binding step must not stop others
            log.exception("finishing the binding of %s failed", w.key)
