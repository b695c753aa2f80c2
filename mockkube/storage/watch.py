"""Watch fan-out and the bounded per-resource event log.

A watch from resourceVersion N replays the retained events after N, then follows live
ones; N older than the window is 410 Gone. Watchers filter on namespace and selectors
with upstream semantics: an object that stops matching arrives as DELETED, one that
starts matching as ADDED.
"""

from __future__ import annotations

import asyncio
import bisect
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from mockkube.storage import loopcalls
from mockkube.storage.cache import CachedEntry, Entry, Held, Packer, RawEntry

Predicate = Callable[[dict], bool]
COMPACTION_AGE = 300.0  # etcd compacts every 5 minutes (--etcd-compaction-interval)


@dataclass(frozen=True, slots=True)
class Event:
    type: str  # ADDED, MODIFIED, DELETED
    entry: Entry  # the object after the change (for DELETED: the last state, with the delete rv)
    prev: dict | None  # the object before the change (MODIFIED/DELETED)
    prev_raw: Held | None = None  # its JSON, where a resumed watch leaves ``prev`` undecoded

    @property
    def rv(self) -> int:
        return self.entry.rv


class EventLog:
    """The newest ``capacity`` events of one resource, searchable by resourceVersion, none
    older than ``max_age`` seconds: etcd's history is compacted every 5 minutes
    (kube-apiserver's --etcd-compaction-interval), so a watch from an older revision is 410
    Gone there too, and a long-lived cluster does not hold every resource's last 10,000
    changes (the soak benchmark saw the logs of quiet resources fill for an hour).

    An event is held as its type, rv and the object after and before the change, as
    entries the cache and the previous event hold too, never a copy: the cache's entry of
    the version the event wrote (its dict and JSON; the JSON forgotten when the event leaves
    the window while the version is still current, ``CachedEntry.forget_raw``), and the
    version it replaced, which from then on is held only here: as its JSON, packed
    (``CachedEntry.supersede``; the dicts of superseded versions were most of a pod's
    memory, then their JSON). A DELETED event's last state is held packed too. ``since``
    decodes what a resumed watch reads."""

    def __init__(self, capacity: int, start_rv: int, max_age: float = COMPACTION_AGE) -> None:
        self.capacity = capacity
        self.max_age = max_age
        self.packer = Packer()
        self._events: deque[tuple[str, Entry, Entry | None]] = deque()  # (type, after, before)
        self._rvs: deque[int] = deque()
        self._times: deque[float] = deque()  # time.monotonic() of each append
        self.window_start = start_rv  # every event with rv > window_start is retained

    def __len__(self) -> int:
        return len(self._events)

    def append(self, ev: Event, after: Entry | None = None, before: Entry | None = None) -> None:
        """``after``: what the cache holds of the version ``ev`` wrote (none for a DELETED
        event); ``before``: the cache's entry of the version it replaced."""
        now = time.monotonic()
        if after is None:
            after = RawEntry(self.packer.pack(ev.entry.raw) if ev.type == "DELETED" else ev.entry.raw, ev.rv)
        if before is None and ev.prev_raw is not None:
            before = RawEntry(ev.prev_raw, 0)
        elif type(before) is CachedEntry:
            before.supersede(self.packer)
        self._events.append((ev.type, after, before))
        self._rvs.append(ev.rv)
        self._times.append(now)
        while len(self._events) > self.capacity:
            self._drop()
        if self._times[0] < now - self.max_age:
            self.compact(now)

    def _drop(self) -> None:
        after = self._events.popleft()[1]
        if type(after) is CachedEntry:
            after.forget_raw()
        self._times.popleft()
        self.window_start = self._rvs.popleft()

    def compact(self, now: float | None = None) -> None:
        """Forget the events older than ``max_age``."""
        before = (time.monotonic() if now is None else now) - self.max_age
        while self._times and self._times[0] < before:
            self._drop()

    def prepend_loaded(self, events: list[Event], start_rv: int) -> None:
        """Seed from the database tail at start (events in rv order)."""
        now = time.monotonic()
        for ev in events[-self.capacity :]:
            self._events.append((ev.type, RawEntry(ev.entry.raw, ev.rv), None))
            self._rvs.append(ev.rv)
            self._times.append(now)
        if events:
            kept = events[-self.capacity :]
            self.window_start = min(self.window_start, kept[0].rv - 1)
        else:
            self.window_start = min(self.window_start, start_rv)

    @property
    def newest(self) -> int:
        """The rv of the newest retained event (the window's start when there is none)."""
        return self._rvs[-1] if self._rvs else self.window_start

    def since(self, rv: int, prev: bool = True) -> list[Event] | None:
        """Events after ``rv``, or None if some of them fell out of the window. Objects are
        decoded when first read (a version still current is the cache's entry, decoded
        already); ``prev=False`` leaves the earlier versions undecoded (a watch without a
        selector, whose ``translate`` needs only their presence)."""
        if rv < self.window_start:
            return None
        i = bisect.bisect_right(self._rvs, rv)
        out = []
        for j in range(i, len(self._events)):
            typ, after, before = self._events[j]
            if type(after) is CachedEntry and after.current:
                entry: Entry = after
            else:
                entry = RawEntry(after.held, self._rvs[j])  # type: ignore[attr-defined]
            held = before.held if before is not None else None  # type: ignore[attr-defined]
            prev_obj = RawEntry(held, 0).obj if prev and held is not None else None
            out.append(Event(typ, entry, prev_obj, held))
        return out


class Watcher:
    """One open watch: a queue of (type, entry) to send, fed by the hub."""

    MAX_BACKLOG = 100_000

    def __init__(self, hub: "Hub", key: str, namespace: str | None, predicate: Predicate | None) -> None:
        self._hub = hub
        self.key = key
        self.namespace = namespace
        self.predicate = predicate
        self.queue: asyncio.Queue[tuple[str, Entry] | None] = asyncio.Queue()
        self.closed = False
        self.overflowed = False
        # the watch is read on the loop that opened it; writers may commit on another thread
        self._loop = _running_loop()
        self._thread = threading.get_ident()
        self._pending: list = []  # from other threads, not yet on the queue
        self._scheduled = False

    def _put(self, item: "tuple[str, Entry] | None") -> None:
        if self._loop is None:
            self.queue.put_nowait(item)
            return
        if threading.get_ident() == self._thread:
            if self._pending:
                self._flush()  # events committed earlier on another thread go first
            self.queue.put_nowait(item)
            return
        # from another thread: one wake-up of the watch's loop for a burst of events, shared
        # with the loop's other watches (appending is atomic; writers hold the store's lock,
        # so they come in order)
        self._pending.append(item)
        if not self._scheduled:
            self._scheduled = True
            loopcalls.call_soon_threadsafe(self._loop, self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        for item in pending:
            self.queue.put_nowait(item)

    def _matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj["metadata"].get("namespace", "") != self.namespace:
            return False
        return self.predicate is None or self.predicate(obj)

    def translate(self, ev: Event) -> tuple[str, Entry] | None:
        """The event this watcher should see, after selector filtering."""
        now = self._matches(ev.entry.obj)
        if ev.type == "ADDED":
            return ("ADDED", ev.entry) if now else None
        if ev.type == "DELETED":
            return ("DELETED", ev.entry) if now else None
        if ev.prev is None and ev.prev_raw is not None and self.predicate is None:
            before = now  # an earlier version of the object: same namespace, no selector to tell
        else:
            before = self._matches(ev.prev)
        if now and before:
            return ("MODIFIED", ev.entry)
        if now:
            return ("ADDED", ev.entry)
        if before:
            return ("DELETED", ev.entry)
        return None

    def offer(self, ev: Event) -> None:
        if self.closed:
            return
        out = self.translate(ev)
        if out is None:
            return
        if self.queue.qsize() >= self.MAX_BACKLOG:
            self.overflowed = True
            self.close()
            return
        self._put(out)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._hub.unsubscribe(self)
            self._put(None)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Hub:
    """Routes committed events to the watchers of their resource."""

    def __init__(self) -> None:
        self._watchers: dict[str, set[Watcher]] = {}
        self._listeners: dict[str, list[Callable[[Event], None]]] = {}

    def subscribe(self, key: str, namespace: str | None, predicate: Predicate | None) -> Watcher:
        w = Watcher(self, key, namespace, predicate)
        self._watchers.setdefault(key, set()).add(w)
        return w

    def unsubscribe(self, w: Watcher) -> None:
        ws = self._watchers.get(w.key)
        if ws is not None:
            ws.discard(w)

    def add_listener(self, key: str, fn: Callable[[Event], None]) -> None:
        """A synchronous listener for the events of one resource (in-process informers).

        It runs inside the writer's call: it must only enqueue, never write."""
        self._listeners.setdefault(key, []).append(fn)

    def remove_listener(self, key: str, fn: Callable[[Event], None]) -> None:
        fns = self._listeners.get(key)
        if fns and fn in fns:
            fns.remove(fn)

    def publish(self, key: str, ev: Event) -> None:
        for w in list(self._watchers.get(key, ())):
            w.offer(ev)
        for fn in self._listeners.get(key, ()):
            fn(ev)

    def close_key(self, key: str) -> None:
        """End the watches of one resource (a custom resource no longer served)."""
        for w in list(self._watchers.get(key, ())):
            w.close()

    def close_all(self) -> None:
        for ws in list(self._watchers.values()):
            for w in list(ws):
                w.close()

    def watcher_count(self, key: str | None = None) -> int:
        """Open watches (of one storage key): a component process keeps some open all along."""
        if key is not None:
            return len(self._watchers.get(key, ()))
        return sum(len(ws) for ws in self._watchers.values())
