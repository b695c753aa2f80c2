"""client-go's leader election rules (mockkube/client/leaderelection.py) on a Lease held in
memory, with resourceVersion checks and a clock the test moves."""

from __future__ import annotations

import asyncio

import pytest

from mockkube.client import leaderelection as le
from mockkube.machinery import errors


class MemoryLock:
    """A Lease store: create once, update only at the current resourceVersion (409 otherwise)."""

    def __init__(self) -> None:
        self.lease: dict | None = None
        self.rv = 0
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise OSError("API unreachable")

    async def get(self) -> dict | None:
        self._check()
        return None if self.lease is None else {**self.lease, "spec": dict(self.lease["spec"])}

    async def create(self, spec: dict) -> dict:
        self._check()
        if self.lease is not None:
            raise errors.already_exists("leases", "coordination.k8s.io", "kube-scheduler")
        self.rv += 1
        self.lease = {"metadata": {"name": "kube-scheduler", "resourceVersion": str(self.rv)}, "spec": dict(spec)}
        return await self.get()

    async def update(self, lease: dict, spec: dict) -> dict:
        self._check()
        if self.lease is None or lease["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise errors.stale("leases", "coordination.k8s.io", "kube-scheduler")
        self.rv += 1
        self.lease = {"metadata": {**lease["metadata"], "resourceVersion": str(self.rv)}, "spec": dict(spec)}
        return await self.get()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def pair(lock: MemoryLock, clock: Clock) -> tuple[le.LeaderElector, le.LeaderElector]:
    cfg = le.Config(name="kube-scheduler")
    return le.LeaderElector(lock, cfg, "a", clock), le.LeaderElector(lock, cfg, "b", clock)


def test_defaults_and_identity_are_upstreams():
    cfg = le.Config(name="kube-scheduler")
    assert (cfg.lease_duration, cfg.renew_deadline, cfg.retry_period, cfg.namespace) == (15.0, 10.0, 2.0, "kube-system")
    host, _, uid = le.identity().rpartition("_")
    assert host and len(uid) == 36
    with pytest.raises(ValueError, match="leaseDuration must be greater than renewDeadline"):
        le.Config(name="x", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match="renewDeadline must be greater than retryPeriod"):
        le.Config(name="x", renew_deadline=2, retry_period=2)


async def test_a_standby_waits_the_lease_duration_from_what_it_observed():
    lock, clock = MemoryLock(), Clock()
    a, b = pair(lock, clock)
    assert await a.try_acquire_or_renew() and a.holds()
    assert lock.lease["spec"]["holderIdentity"] == "a" and lock.lease["spec"]["leaseTransitions"] == 0
    assert not await b.try_acquire_or_renew() and not b.is_leader()
    clock.t += 14.9  # a stopped renewing (killed): b saw the record 14.9 s ago
    assert not await b.try_acquire_or_renew()
    clock.t += 0.2
    assert await b.try_acquire_or_renew() and b.holds()
    spec = lock.lease["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1 and spec["leaseDurationSeconds"] == 15
    # a's own view: it has not renewed for 15 s, so it may not act even before it notices
    assert not a.holds()
    assert not await a.try_acquire_or_renew()  # b's lease is valid as a now observes it
    assert not a.is_leader()


async def test_renewing_keeps_the_lease_and_a_renewal_resets_the_standbys_wait():
    lock, clock = MemoryLock(), Clock()
    a, b = pair(lock, clock)
    assert await a.try_acquire_or_renew()
    acquired = lock.lease["spec"]["acquireTime"]
    for _ in range(20):  # 40 s of renewals every 2 s: b never gets it
        clock.t += 2
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
    assert lock.lease["spec"]["acquireTime"] == acquired and lock.lease["spec"]["leaseTransitions"] == 0


async def test_two_candidates_racing_for_a_free_lease_one_wins():
    lock, clock = MemoryLock(), Clock()
    a, b = pair(lock, clock)
    won = await asyncio.gather(a.try_acquire_or_renew(), b.try_acquire_or_renew())
    assert sorted(won) == [False, True]
    assert lock.lease["spec"]["holderIdentity"] in ("a", "b")


async def test_release_lets_the_standby_take_over_at_once():
    lock, clock = MemoryLock(), Clock()
    a, b = pair(lock, clock)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    await a.release()
    assert lock.lease["spec"]["holderIdentity"] == "" and lock.lease["spec"]["leaseDurationSeconds"] == 1
    assert not a.holds()
    assert await b.try_acquire_or_renew()  # an empty holder is free whatever the times say
    assert lock.lease["spec"]["leaseTransitions"] == 1


async def test_a_leader_that_cannot_renew_within_the_deadline_loses():
    lock = MemoryLock()
    cfg = le.Config(name="kube-scheduler", lease_duration=0.6, renew_deadline=0.4, retry_period=0.05)
    a = le.LeaderElector(lock, cfg, "a")
    await a.acquire()
    renewing = asyncio.create_task(a.renew())
    await asyncio.sleep(0.15)
    assert not renewing.done() and a.holds()
    lock.down = True  # the API is unreachable
    await asyncio.wait_for(renewing, 2.0)  # returns: leadership lost
    assert not a.is_leader() and not a.holds()
