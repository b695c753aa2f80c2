"""Leader election over a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection.

A singleton component (the scheduler, the controller-manager) runs as several processes
and only the one holding the Lease acts. The rules are client-go's:

- A candidate takes the Lease when it has none, when its holder is empty, or when the
  record has not changed for ``leaseDurationSeconds`` *as this candidate observed it* (its
  own clock from the moment it saw the record change, never the holder's ``renewTime``:
  clocks of different machines are not compared). It retries every ``retry_period`` with
  client-go's jitter (factor 1.2).
- The holder renews every ``retry_period``; if it cannot renew within ``renew_deadline``
  it has lost the lease and must stop acting (upstream's components exit). ``renew_deadline``
  is shorter than the lease so the old leader stops before anyone else may start.
- Writes carry the Lease's resourceVersion: two candidates writing at once, one gets 409.
- On a clean stop the holder releases the Lease (holder empty, 1 s), so a standby takes
  over at its next try (``ReleaseOnCancel``).

``holds()`` says whether this process may act right now: leader, and renewed within the
renew deadline by its own clock. A component's writes check it (``HTTP.guard``), so a
leader whose loop stalled past its deadline cannot write before it notices.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

import aiohttp

from mockkube.machinery import errors, meta

log = logging.getLogger("mockkube.leaderelection")

# client-go / component-base defaults (LeaderElectionConfiguration)
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
JITTER = 1.2

_FAILED = (errors.APIError, OSError, asyncio.TimeoutError, aiohttp.ClientError)  # this try failed: try again


def identity() -> str:
    """``hostname_uuid``, as kube-scheduler and kube-controller-manager name themselves:
    two processes on one host never share an identity."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass
class Config:
    name: str  # the Lease: kube-scheduler, kube-controller-manager
    namespace: str = "kube-system"
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD

    def __post_init__(self) -> None:
        # component-base's validation of --leader-elect-* flags
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER * self.retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")


class HTTPLeaseLock:
    """The Lease read and written over HTTP (``remote.HTTP``), each call bounded in time."""

    def __init__(self, http_: Any, namespace: str, name: str) -> None:
        self.http = http_
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self.namespace, self.name = namespace, name

    async def get(self) -> dict | None:
        try:
            return await self.http.arequest("GET", f"{self.path}/{self.name}")
        except errors.APIError as e:
            if e.code == 404:
                return None
            raise

    async def create(self, spec: dict) -> dict:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }
        return await self.http.arequest("POST", self.path, body)

    async def update(self, lease: dict, spec: dict) -> dict:
        body = {**lease, "spec": spec}  # metadata.resourceVersion: a concurrent write is a 409
        return await self.http.arequest("PUT", f"{self.path}/{self.name}", body)


class LeaderElector:
    def __init__(
        self, lock: Any, config: Config, ident: str | None = None, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.lock = lock
        self.config = config
        self.identity = ident or identity()
        self._mono = monotonic
        self._lease: dict | None = None  # the newest Lease object seen (its resourceVersion)
        self._observed: dict = {}  # the spec last seen or written
        self._observed_at = float("-inf")  # when it was seen to change, by this process's clock
        self._renewed_at = float("-inf")  # this process's last successful acquire or renew
        self._leading = False

    # -- state -------------------------------------------------------------------------
    def is_leader(self) -> bool:
        return self._leading and self._observed.get("holderIdentity") == self.identity

    def holds(self) -> bool:
        """Leader, and renewed within the renew deadline by this process's clock."""
        return self.is_leader() and self._mono() - self._renewed_at < self.config.renew_deadline

    def _valid(self, now: float) -> bool:
        return self._observed_at + float(self._observed.get("leaseDurationSeconds") or 0) > now

    def _observe(self, lease: dict) -> None:
        self._lease = lease
        self._observed = dict(lease.get("spec") or {})
        self._observed_at = self._mono()

    # -- one attempt (client-go's tryAcquireOrRenew) -----------------------------------
    async def try_acquire_or_renew(self) -> bool:
        stamp = meta.rfc3339_micro(time.time())
        record = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.config.lease_duration),
            "acquireTime": stamp,
            "renewTime": stamp,
        }
        # 1. the leader renews optimistically on the Lease it wrote last
        if self.is_leader() and self._valid(self._mono()) and self._lease is not None:
            record["acquireTime"] = self._observed.get("acquireTime", stamp)
            record["leaseTransitions"] = self._observed.get("leaseTransitions", 0)
            try:
                self._observe(await self.lock.update(self._lease, record))
                self._renewed_at = self._mono()
                return True
            except _FAILED as e:
                log.info("failed to update the lease optimistically: %s; falling back to the slow path", e)
        # 2. read it, or create it
        try:
            lease = await self.lock.get()
            if lease is None:
                record["leaseTransitions"] = 0
                self._observe(await self.lock.create(record))
                return self._won()
        except _FAILED as e:
            log.info("error retrieving or creating the lease: %s", e)
            return False
        # 3. someone else's and still valid: wait
        spec = lease.get("spec") or {}
        self._lease = lease
        if spec != self._observed:
            self._observed = dict(spec)
            self._observed_at = self._mono()
        if spec.get("holderIdentity") and self._valid(self._mono()) and spec.get("holderIdentity") != self.identity:
            self._leading = False
            return False
        # 4. take or renew it
        if spec.get("holderIdentity") == self.identity:
            record["acquireTime"] = spec.get("acquireTime", stamp)
            record["leaseTransitions"] = spec.get("leaseTransitions", 0)
        else:
            record["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        try:
            self._observe(await self.lock.update(lease, record))
        except _FAILED as e:
            log.info("failed to update the lease: %s", e)
            return False
        return self._won()

    def _won(self) -> bool:
        if not self._leading:
            log.info("%s became leader of %s/%s", self.identity, self.config.namespace, self.config.name)
        self._leading = True
        self._renewed_at = self._mono()
        return True

    async def _attempt(self, budget: float) -> bool:
        try:
            return await asyncio.wait_for(self.try_acquire_or_renew(), max(budget, 0.001))
        except asyncio.TimeoutError:
            return False

    # -- loops -----------------------------------------------------------------------------
    async def acquire(self) -> None:
        """Return once this process holds the Lease (client-go's acquire: JitterUntil)."""
        cfg = self.config
        while not await self._attempt(cfg.renew_deadline):
            await asyncio.sleep(cfg.retry_period * (1 + random.random() * JITTER))

    async def renew(self) -> None:
        """Keep the Lease; return when it could not be renewed within the renew deadline
        (leadership lost: the caller stops acting at once)."""
        cfg = self.config
        while True:
            deadline = self._mono() + cfg.renew_deadline
            ok = False
            while True:  # PollImmediateUntil(retryPeriod, tryAcquireOrRenew, renewDeadline)
                left = deadline - self._mono()
                if left <= 0:
                    break
                ok = await self._attempt(left)
                if ok:
                    break
                await asyncio.sleep(min(cfg.retry_period, max(0.0, deadline - self._mono())))
            if not ok:
                self._leading = False
                log.error(
                    "%s: failed to renew lease %s/%s within %.1fs",
                    self.identity,
                    cfg.namespace,
                    cfg.name,
                    cfg.renew_deadline,
                )
                return
            await asyncio.sleep(cfg.retry_period)

    async def release(self) -> None:
        """Give the Lease up (holder empty, 1 s) so a standby takes over at its next try."""
        if not self.is_leader() or self._lease is None:
            return
        self._leading = False
        stamp = meta.rfc3339_micro(time.time())
        record = {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": stamp,
            "renewTime": stamp,
            "leaseTransitions": self._observed.get("leaseTransitions", 0),
        }
        try:
            await asyncio.wait_for(self.lock.update(self._lease, record), self.config.retry_period)
        except _FAILED as e:
            log.info("failed to release the lease: %s", e)
