"""Faults on demand, for testing clients, drivers and operators against a misbehaving
cluster: seeded, scoped, time-limited, listed and clearable.

API faults (checked by an HTTP middleware before a request reaches the API):
  ``error``       answer with a Status: 409, 429 (with Retry-After), 500, 503 or 504
  ``latency``     hold the request for ``delaySeconds`` first
  ``drop-watch``  cut a matching watch's connection ``afterSeconds`` after it started
  ``gone``        answer a watch that resumes from a resourceVersion with 410 Expired
scoped by ``verbs`` (kube verbs: get, list, watch, create, update, patch, delete,
deletecollection), ``resources`` (plural, or plural/subresource), ``namespaces`` and
``users`` (an empty list matches everything); ``probability`` (seeded per fault with
``seed``), ``count`` (fire at most this often) and ``durationSeconds`` (on the server's
clock) bound them.

Cluster faults (applied on the components' side, undone when removed or expired):
  ``node-notready``   the node's kubelet stops: its lease is not renewed, the node goes
                      NotReady/Unknown after the grace period and is tainted
  ``kubelet-restart`` the node's kubelet stops and starts again (one shot)
  ``device-unhealthy`` a simulated driver reports ``device`` in ``pool`` unhealthy
                      (tainted with ``effect``)
  ``prepare-failure`` / ``unprepare-failure``  NodePrepareResources (or Unprepare) fails for
                      the chosen ``claims`` (namespace/name or name) or ``devices``
                      (driver/pool/device or device name)
  ``driver-crash``    an out-of-process driver's kubelet plugin on ``node`` is killed
                      (its sockets go, the kubelet deregisters it and wipes its slices
                      after the wiping delay); removing the fault starts it again
  ``slow-driver``     a driver's NodePrepareResources times out (DeadlineExceeded) for
                      each claim until ``delaySeconds`` after its first attempt; the
                      kubelet retries as it does after a failed call

    f = server.faults.add({"kind": "error", "code": 429, "verbs": ["create"], "resources": ["pods"]})
    server.faults.list(); server.faults.remove(f.id); server.faults.clear()
"""

from __future__ import annotations

import itertools
import random
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

API_KINDS = ("error", "latency", "drop-watch", "gone")
CLUSTER_KINDS = (
    "node-notready",
    "kubelet-restart",
    "device-unhealthy",
    "prepare-failure",
    "unprepare-failure",
    "slow-driver",
    "driver-crash",
)
ERROR_CODES = (409, 429, 500, 503, 504)
_SCOPES = ("verbs", "resources", "namespaces", "users", "nodes", "claims", "devices", "drivers")


class FaultError(ValueError):
    """A fault spec that cannot be used; the message names the field."""


@dataclass
class Fault:
    id: str
    kind: str
    spec: dict
    created: float
    until: float | None
    rng: random.Random
    count: int | None = None
    fired: int = 0
    scopes: dict[str, frozenset] = field(default_factory=dict)
    seen: dict[str, float] = field(default_factory=dict)  # slow-driver: claim uid -> first attempt

    def to_dict(self, now: float) -> dict:
        out = {"id": self.id, "kind": self.kind, **self.spec, "fired": self.fired}
        if self.until is not None:
            out["remainingSeconds"] = max(0.0, round(self.until - now, 3))
        return out

    def in_scope(self, name: str, *values: str) -> bool:
        allowed = self.scopes.get(name)
        return not allowed or any(v in allowed for v in values if v)

    def expired(self, now: float) -> bool:
        return (self.until is not None and now >= self.until) or (self.count is not None and self.fired >= self.count)

    def roll(self) -> bool:
        """Whether this match fires (seeded probability), counting it if so."""
        p = float(self.spec.get("probability", 1.0))
        if p < 1.0 and self.rng.random() >= p:
            return False
        self.fired += 1
        return True


def _strings(spec: dict, name: str) -> frozenset:
    value = spec.get(name) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FaultError(f"{name}: must be a list of strings")
    return frozenset(value)


def validate(spec: Any) -> dict:
    """Check a fault spec; returns it with defaults filled in."""
    if not isinstance(spec, dict):
        raise FaultError("a fault must be an object")
    kind = spec.get("kind")
    if kind not in API_KINDS + CLUSTER_KINDS:
        raise FaultError(f"kind: {kind!r} is not one of {', '.join(API_KINDS + CLUSTER_KINDS)}")
    spec = dict(spec)
    if kind == "error":
        code = spec.setdefault("code", 500)
        if code not in ERROR_CODES:
            raise FaultError(f"code: {code!r} is not one of {', '.join(map(str, ERROR_CODES))}")
        if code == 429:
            spec.setdefault("retryAfterSeconds", 1)
    for name in ("probability", "delaySeconds", "afterSeconds", "durationSeconds", "retryAfterSeconds"):
        if name in spec and (
            not isinstance(spec[name], (int, float)) or isinstance(spec[name], bool) or spec[name] < 0
        ):
            raise FaultError(f"{name}: must be a non-negative number")
    if not 0 <= float(spec.get("probability", 1)) <= 1:
        raise FaultError("probability: must be between 0 and 1")
    if "count" in spec and (not isinstance(spec["count"], int) or spec["count"] < 1):
        raise FaultError("count: must be a positive integer")
    if kind in ("latency", "slow-driver"):
        spec.setdefault("delaySeconds", 1.0)
    if kind == "drop-watch":
        spec.setdefault("afterSeconds", 0.0)
    if kind in ("node-notready", "kubelet-restart", "driver-crash") and not spec.get("node"):
        raise FaultError("node: required")
    if kind == "driver-crash" and not spec.get("driver"):
        raise FaultError("driver: required")
    if kind == "device-unhealthy":
        for name in ("driver", "pool", "device"):
            if not spec.get(name):
                raise FaultError(f"{name}: required")
        if spec.get("effect") not in (None, "NoSchedule", "NoExecute", "None"):
            raise FaultError("effect: must be NoSchedule, NoExecute or None")
    for name in _SCOPES:
        if name in spec:
            _strings(spec, name)
    return spec


class Faults:
    """The server's injected faults (thread-safe: the API and the components both read it)."""

    def __init__(self, clock: Callable[[], float], metrics: Any = None) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._faults: dict[str, Fault] = {}
        self._ids = itertools.count(1)
        self.on_apply: Callable[[Fault], None] | None = None  # cluster faults: set by the node simulation
        self.on_revert: Callable[[Fault], None] | None = None
        self._injected = None
        if metrics is not None:
            self._injected = metrics.counter(
                "mockkube_faults_injected_total", "Faults that fired, by kind (mockkube's fault injection).", ["kind"]
            )
            metrics.gauge("mockkube_faults_active", "Faults currently injected.").set_function(
                lambda: len(self._faults)
            )

    # -- managing --------------------------------------------------------------------
    def add(self, spec: dict) -> Fault:
        spec = validate(spec)
        now = self.clock()
        seed = spec.get("seed")
        fault_id = f"fault-{next(self._ids)}"
        duration = spec.get("durationSeconds")
        f = Fault(
            id=fault_id,
            kind=spec["kind"],
            spec=spec,
            created=now,
            until=now + float(duration) if duration is not None else None,
            rng=random.Random(seed if seed is not None else fault_id),
            count=spec.get("count"),
            scopes={n: _strings(spec, n) for n in _SCOPES if spec.get(n)},
        )
        with self._lock:
            self._faults[f.id] = f
        if f.kind in CLUSTER_KINDS:
            if self.on_apply is None:
                self._faults.pop(f.id, None)
                raise FaultError(f"kind: {f.kind} needs the node simulation, which is not running")
            try:
                self.on_apply(f)
            except Exception:
                with self._lock:
                    self._faults.pop(f.id, None)
                raise
        if f.kind == "kubelet-restart":
            self.remove(f.id)  # one shot: stopped and started again
        return f

    def list(self) -> list[dict]:
        self.expire()
        now = self.clock()
        with self._lock:
            return [f.to_dict(now) for f in self._faults.values()]

    def remove(self, fault_id: str) -> bool:
        with self._lock:
            f = self._faults.pop(fault_id, None)
        if f is not None and f.kind in CLUSTER_KINDS and self.on_revert is not None:
            self.on_revert(f)
        return f is not None

    def clear(self) -> int:
        """Remove every fault (undoing cluster faults); the reset between tests calls this."""
        with self._lock:
            ids = list(self._faults)
        return sum(self.remove(i) for i in ids)

    def expire(self) -> None:
        now = self.clock()
        with self._lock:
            gone = [f.id for f in self._faults.values() if f.expired(now)]
        for i in gone:
            self.remove(i)

    def __len__(self) -> int:
        return len(self._faults)

    # -- matching --------------------------------------------------------------------
    def _fire(self, f: Fault) -> bool:
        if not f.roll():
            return False
        if self._injected is not None:
            self._injected.labels(f.kind).inc()
        return True

    def match_api(
        self, verb: str, resource: str, subresource: str, namespace: str, user: str, resumes_watch: bool
    ) -> list[Fault]:
        """The API faults that fire for this request (latency first, then at most one answer)."""
        if not self._faults:
            return []
        now = self.clock()
        out: list[Fault] = []
        with self._lock:
            candidates = [f for f in self._faults.values() if f.kind in API_KINDS]
        res = f"{resource}/{subresource}" if subresource else resource
        for f in candidates:
            if f.expired(now):
                continue
            if not (
                f.in_scope("verbs", verb)
                and f.in_scope("resources", resource, res)
                and f.in_scope("namespaces", namespace)
                and f.in_scope("users", user)
            ):
                continue
            if f.kind in ("drop-watch", "gone") and verb != "watch":
                continue
            if f.kind == "gone" and not resumes_watch:
                continue
            if self._fire(f):
                out.append(f)
        self.expire()
        return out

    def match_claim(self, kind: str, driver: str, claim: dict, devices: list[tuple[str, str, str]]) -> Fault | None:
        """A prepare/unprepare-failure or slow-driver fault for this claim on this driver."""
        if not self._faults:
            return None
        now = self.clock()
        m = claim.get("metadata") or {}
        ref = f"{m.get('namespace', '')}/{m.get('name', '')}"
        with self._lock:
            candidates = [f for f in self._faults.values() if f.kind == kind]
        for f in candidates:
            if f.expired(now) or not f.in_scope("drivers", driver):
                continue
            if not f.in_scope("claims", ref, m.get("name", "")):
                continue
            if f.scopes.get("devices") and not any(f.in_scope("devices", "/".join(d), d[2]) for d in devices):
                continue
            if self._fire(f):
                return f
        return None
