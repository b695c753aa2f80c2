"""The scheduling queue: activeQ (priority, then arrival), backoffQ and unschedulable pods.

As upstream: a pod that failed waits in "unschedulable" until a cluster event that could
make it schedulable moves it to backoff (if its backoff has not expired) or active; a
pod rejected by PreEnqueue is "gated" there too and retried on any event. When activeQ
is empty a backing-off pod is popped early (SchedulerPopFromBackoffQ). Pods stuck
longer than five minutes are flushed back. Keys are "namespace/name".
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Callable

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
UNSCHEDULABLE_TIMEOUT = 300.0


class _Entry:
    __slots__ = (
        "key",
        "priority",
        "added",
        "attempts",
        "backoff_until",
        "gated",
        "uses_dra",
        "unschedulable_since",
        "errored",
        "rejected_by",
    )

    def __init__(self, key: str) -> None:
        self.key = key
        self.priority = 0
        self.added = 0.0
        self.attempts = 0
        self.backoff_until = 0.0
        self.gated = False
        self.uses_dra = False
        self.unschedulable_since = 0.0
        self.errored = False
        self.rejected_by: frozenset[str] = frozenset()  # plugins that rejected the last attempt


class SchedulingQueue:
    def __init__(
        self, clock: Callable[[], float], initial_backoff: float = INITIAL_BACKOFF, max_backoff: float = MAX_BACKOFF
    ) -> None:
        self.clock = clock
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.entries: dict[str, _Entry] = {}
        self._active: list[tuple[int, float, int, str]] = []
        self._in_active: set[str] = set()
        self._backoff: list[tuple[float, int, str]] = []
        self._in_backoff: set[str] = set()
        self.unschedulable: set[str] = set()
        self.in_flight: str | None = None
        self._seq = itertools.count()
        self._wake = asyncio.Event()

    def __len__(self) -> int:
        return len(self._in_active) + len(self._in_backoff) + len(self.unschedulable)

    def has_active(self) -> bool:
        return bool(self._in_active)

    # -- adding ---------------------------------------------------------------
    def add(self, key: str, priority: int = 0, uses_dra: bool = False) -> None:
        """A new or changed pending pod: straight to activeQ unless it is backing off."""
        e = self.entries.get(key)
        if e is None:
            e = self.entries[key] = _Entry(key)
            e.added = self.clock()
        e.priority = priority
        e.uses_dra = uses_dra
        e.gated = False
        if key == self.in_flight or key in self._in_active:
            return
        self.unschedulable.discard(key)
        if e.backoff_until > self.clock():
            self._push_backoff(e)
        else:
            self._push_active(e)

    def _push_active(self, e: _Entry) -> None:
        if e.key in self._in_active:
            return
        self._in_backoff.discard(e.key)
        self._in_active.add(e.key)
        heapq.heappush(self._active, (-e.priority, e.added, next(self._seq), e.key))
        self._wake.set()

    def _push_backoff(self, e: _Entry) -> None:
        if e.key in self._in_backoff or e.key in self._in_active:
            return
        self._in_backoff.add(e.key)
        heapq.heappush(self._backoff, (e.backoff_until, next(self._seq), e.key))
        self._wake.set()

    def delete(self, key: str) -> None:
        self.entries.pop(key, None)
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        self.unschedulable.discard(key)

    # -- failures -------------------------------------------------------------
    def gate(self, key: str) -> None:
        """PreEnqueue rejected the pod: park it until an event."""
        if self.in_flight == key:
            self.in_flight = None
        e = self.entries.get(key)
        if e is None:
            return
        e.gated = True
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        self.unschedulable.add(key)

    def requeue_failed(self, key: str, error: bool = False, rejected_by: frozenset[str] = frozenset()) -> None:
        """After a failed attempt: errors go to backoff, unschedulable pods wait for events
        (``rejected_by``: the plugins that rejected it, for events only some plugins care about)."""
        if self.in_flight == key:
            self.in_flight = None
        e = self.entries.get(key)
        if e is None:
            return
        e.errored = error
        e.rejected_by = rejected_by
        e.attempts += 1
        e.backoff_until = self.clock() + min(self.max_backoff, self.initial_backoff * 2 ** (e.attempts - 1))
        if error:
            self._push_backoff(e)
        else:
            e.unschedulable_since = self.clock()
            self.unschedulable.add(key)

    def release(self, key: str) -> None:
        """The pod left the scheduling cycle for a long binding cycle (KEP-5007 PreBind
        wait): no longer in flight, not queued either; ``done`` or ``requeue_failed`` follow."""
        if self.in_flight == key:
            self.in_flight = None
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        self.unschedulable.discard(key)

    def done(self, key: str) -> None:
        """Scheduled: forget the pod."""
        if self.in_flight == key:
            self.in_flight = None
        self.delete(key)

    # -- cluster events -------------------------------------------------------
    def move_all(self, pred: Callable[[_Entry], bool] | None = None) -> int:
        """Move unschedulable pods matching ``pred`` to backoff or active; returns how many."""
        now = self.clock()
        moved = 0
        for key in list(self.unschedulable):
            e = self.entries.get(key)
            if e is None:
                self.unschedulable.discard(key)
                continue
            if pred is not None and not pred(e):
                continue
            self.unschedulable.discard(key)
            e.gated = False
            if e.backoff_until > now:
                self._push_backoff(e)
            else:
                self._push_active(e)
            moved += 1
        return moved

    def flush_stale(self) -> None:
        limit = self.clock() - UNSCHEDULABLE_TIMEOUT
        self.move_all(lambda e: not e.gated and e.unschedulable_since < limit)

    # -- popping --------------------------------------------------------------
    def _flush_backoff(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key = heapq.heappop(self._backoff)
            if key in self._in_backoff:
                e = self.entries.get(key)
                self._in_backoff.discard(key)
                if e is not None:
                    self._push_active(e)

    def pop_nowait(self) -> str | None:
        self._flush_backoff()
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            if key in self._in_active:
                self._in_active.discard(key)
                self.in_flight = key
                return key
        # activeQ empty: take a pod backing off after "unschedulable" early (not after errors)
        for i, (_, _, key) in enumerate(sorted(self._backoff)):
            e = self.entries.get(key)
            if key in self._in_backoff and e is not None and not e.errored:
                self._in_backoff.discard(key)
                self._backoff = [x for x in self._backoff if x[2] != key]
                heapq.heapify(self._backoff)
                self.in_flight = key
                return key
        return None

    def next_backoff_expiry(self) -> float | None:
        live = [t for t, _, k in self._backoff if k in self._in_backoff]
        return min(live) if live else None

    async def pop(self) -> str:
        while True:
            key = self.pop_nowait()
            if key is not None:
                return key
            self._wake.clear()
            expiry = self.next_backoff_expiry()
            if expiry is None:
                await self._wake.wait()
            else:
                try:
                    await asyncio.wait_for(self._wake.wait(), max(0.001, expiry - self.clock()))
                except asyncio.TimeoutError:
                    pass
