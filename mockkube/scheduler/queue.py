"""The scheduling queue: activeQ (priority, then arrival), backoffQ and unschedulable pods.

As upstream (SchedulerQueueingHints): a pod that failed records the plugins that rejected
it and waits in "unschedulable" until a cluster event comes that one of those plugins
registered (EventsToRegister) and whose queueing hint answers Queue for this pod; it then
moves to backoffQ (its backoff has not expired) or activeQ. Events that arrive while a pod
is being scheduled are kept and replayed against it if it comes back unschedulable. A pod
rejected by PreEnqueue is "gated" there and moves only on its gating plugin's events (or
when it changes). When activeQ is empty a backing-off pod is popped early
(SchedulerPopFromBackoffQ). Pods stuck longer than five minutes are flushed back
(UnschedulableTimeout). Keys are "namespace/name".
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from typing import Any, Callable

from mockkube.scheduler import framework as fw

log = logging.getLogger("mockkube.scheduler")

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
UNSCHEDULABLE_TIMEOUT = 300.0

# queueingStrategy
QUEUE_SKIP = 0
QUEUE_AFTER_BACKOFF = 1

# HintMap: for each registered event, the (plugin, hint) pairs that registered it
HintMap = dict[fw.ClusterEvent, list[tuple[str, "fw.HintFn | None"]]]


# per registered event and plugin, the Narrowing the plugin gave with its hint
NarrowingMap = dict[tuple[fw.ClusterEvent, str], fw.Narrowing]
# for an incoming event: the matching (plugin, hint) pairs, their plugins, and each
# registration's (plugin, Narrowing) when every one of them has one (None: ask every pod)
_Matched = tuple[list[tuple[str, "fw.HintFn | None"]], frozenset[str], "list[tuple[str, fw.Narrowing]] | None"]


def build_hint_map(plugins: list[fw.Plugin]) -> HintMap:
    """The profile's QueueingHintMap from its plugins' EventsToRegister."""
    out: HintMap = {}
    for p in plugins:
        for ev in p.events_to_register():
            out.setdefault(ev.event, []).append((p.name, ev.hint))
    return out


def build_narrowings(plugins: list[fw.Plugin]) -> NarrowingMap:
    """The Narrowings the plugins registered beside their hints (mockkube's; see fw.Narrowing).

    Only for an event a plugin registered once: a second registration of it, narrowed or
    not, has a hint the one Narrowing does not vouch for."""
    out: NarrowingMap = {}
    seen: set[tuple[fw.ClusterEvent, str]] = set()
    for p in plugins:
        for ev in p.events_to_register():
            k = (ev.event, p.name)
            if k in seen:
                out.pop(k, None)
                continue
            seen.add(k)
            if ev.narrowing is not None:
                out[k] = ev.narrowing
    return out


class _Entry:
    __slots__ = (
        "key",
        "priority",
        "added",
        "attempts",
        "backoff_until",
        "gated",
        "gating",
        "unschedulable_since",
        "errored",
        "rejected_by",
        "_pod",
        "_seen",
        "last_event",
    )

    def __init__(self, key: str, seen: Callable[[str, dict], None] | None = None) -> None:
        self.key = key
        self._seen = seen  # told of each pod the entry comes to hold (the narrowing index)
        self.priority = 0
        self.added = 0.0
        self.attempts = 0
        self.backoff_until = 0.0
        self.gated = False
        self.gating = ""  # the PreEnqueue plugin that gated the pod
        self.unschedulable_since = 0.0
        self.errored = False
        self.rejected_by: frozenset[str] = frozenset()  # UnschedulablePlugins of the last attempt
        self._pod: dict | None = None
        self.last_event = ""  # the event that last brought it into activeQ or backoffQ

    @property
    def pod(self) -> dict | None:
        """The pod as last seen, for the hints."""
        return self._pod

    @pod.setter
    def pod(self, pod: dict | None) -> None:
        self._pod = pod
        if pod is not None and self._seen is not None:
            self._seen(self.key, pod)


class SchedulingQueue:
    def __init__(
        self,
        clock: Callable[[], float],
        initial_backoff: float = INITIAL_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        hints: HintMap | None = None,
        incoming: Callable[[str, str], None] | None = None,
        narrowings: NarrowingMap | None = None,
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
        # events seen while each popped pod was being scheduled (upstream's inFlightEvents)
        self.in_flight_events: dict[str, list[tuple[fw.ClusterEvent, Any, Any]]] = {}
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self.set_hints(hints or {}, narrowings)
        # scheduler_queue_incoming_pods_total{queue, event}
        self.incoming = incoming or (lambda queue, event: None)

    def set_hints(self, hints: HintMap, narrowings: NarrowingMap | None = None) -> None:
        self.hints = hints
        self._matching: dict[tuple[str, int], _Matched] = {}  # per incoming (resource, action)
        self.plugin_events: dict[str, list[fw.ClusterEvent]] = {}
        for ev, fns in hints.items():
            for plugin, _ in fns:
                self.plugin_events.setdefault(plugin, []).append(ev)
        # the narrowing index: (plugin, key) -> queued pods whose entry's pod has that key
        self._narrowings = dict(narrowings or {})
        self._pod_keyers = {(plugin, n.pod_keys) for (_, plugin), n in self._narrowings.items()}
        self._keyed: dict[tuple[str, Any], set[str]] = {}
        self._keys_of: dict[str, set[tuple[str, Any]]] = {}
        self._unkeyed: set[str] = set()  # pods whose keys could not be had: every event may concern them
        seen = self._seen if self._pod_keyers else None
        for e in self.entries.values():  # hints set again over a queue that holds pods
            e._seen = seen
            if seen is not None and e.pod is not None:
                seen(e.key, e.pod)

    def _seen(self, key: str, pod: dict) -> None:
        """Index the version of the pod its entry now holds (the one the hints are asked of)."""
        self._forget(key)
        for plugin, pod_keys in self._pod_keyers:
            try:
                keys = list(pod_keys(pod))
            except Exception:  # as a hint that fails counts as Queue: asked at every event
                log.exception("narrowing keys of %s for %s failed", key, plugin)
                self._unkeyed.add(key)
                continue
            for k in keys:
                pk = (plugin, k)
                self._keyed.setdefault(pk, set()).add(key)
                self._keys_of.setdefault(key, set()).add(pk)

    def _forget(self, key: str) -> None:
        self._unkeyed.discard(key)
        for pk in self._keys_of.pop(key, ()):
            keys = self._keyed.get(pk)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._keyed[pk]

    def _candidates(self, event: fw.ClusterEvent, old: Any, new: Any) -> set[str]:
        """The parked pods an event may move: all of them, unless every plugin that registered
        the event narrowed it (fw.Narrowing) to pods holding one of its keys. (A pod parked
        with no plugin to blame is gated by none, and only a wildcard event moves it.)"""
        found = None if event.wildcard else self._hints_for(event)[2]
        if found is None:
            return self.unschedulable
        out = set(self._unkeyed)
        for plugin, n in found:
            keys = n.event_keys(old, new)
            if keys is None:
                return self.unschedulable
            for key in keys:
                out |= self._keyed.get((plugin, key), set())
        return out & self.unschedulable

    def __len__(self) -> int:
        return len(self._in_active) + len(self._in_backoff) + len(self.unschedulable)

    def has_active(self) -> bool:
        return bool(self._in_active)

    # -- adding ---------------------------------------------------------------
    def add(self, key: str, priority: int = 0, pod: dict | None = None, event: str = "") -> None:
        """A new pending pod, or one whose change may let it pass PreEnqueue: straight to
        activeQ unless it is backing off."""
        e = self.entries.get(key)
        new = e is None
        if e is None:
            e = self.entries[key] = _Entry(key, self._seen if self._pod_keyers else None)
            e.added = self.clock()
        e.priority = priority
        if pod is not None:
            e.pod = pod
        e.gated = False
        e.gating = ""
        if key == self.in_flight or key in self._in_active or key in self.in_flight_events:
            return
        self.unschedulable.discard(key)
        label = event or (fw.EVENT_UNSCHEDULED_POD_ADD if new else fw.EVENT_UNSCHEDULED_POD_UPDATE).label
        if e.backoff_until > self.clock():
            self._push_backoff(e, label)
        else:
            self._push_active(e, label)

    def update(self, key: str, priority: int, old: dict, new: dict, events: list[fw.ClusterEvent]) -> None:
        """PriorityQueue.Update for a pod already queued: in flight, the events are kept for
        when it comes back; waiting in unschedulable, its own change is judged by the hints."""
        e = self.entries.get(key)
        if e is None:
            return
        e.priority = priority
        e.pod = new
        if key in self.in_flight_events:
            for ev in events:
                self.in_flight_events[key].append((ev, old, new))
            return
        if key not in self.unschedulable:
            return  # in activeQ or backoffQ: it will be tried with its new spec anyway
        for ev in events:
            strategy = self.worth_requeuing(e, ev, old, new)
            if strategy != QUEUE_SKIP:
                self._requeue(e, strategy, ev.label)
                return

    def _push_active(self, e: _Entry, event: str = "") -> None:
        if e.key in self._in_active:
            return
        self._in_backoff.discard(e.key)
        self._in_active.add(e.key)
        heapq.heappush(self._active, (-e.priority, e.added, next(self._seq), e.key))
        self._wake.set()
        if event:
            e.last_event = event
            self.incoming("active", event)

    def _push_backoff(self, e: _Entry, event: str = "") -> None:
        if e.key in self._in_backoff or e.key in self._in_active:
            return
        self._in_backoff.add(e.key)
        heapq.heappush(self._backoff, (e.backoff_until, next(self._seq), e.key))
        self._wake.set()
        if event:
            e.last_event = event
            self.incoming("backoff", event)

    def delete(self, key: str) -> None:
        self.entries.pop(key, None)
        self._forget(key)
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        self.unschedulable.discard(key)
        self.in_flight_events.pop(key, None)

    # -- failures -------------------------------------------------------------
    def gate(self, key: str, plugin: str = "") -> None:
        """PreEnqueue (``plugin``) rejected the pod: park it until one of its events."""
        if self.in_flight == key:
            self.in_flight = None
        self.in_flight_events.pop(key, None)
        e = self.entries.get(key)
        if e is None:
            return
        e.gated = True
        e.gating = plugin
        e.rejected_by = frozenset((plugin,)) if plugin else frozenset()
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        if key not in self.unschedulable:
            self.unschedulable.add(key)
            # upstream gates the pod as it enters activeQ, under that move's event
            self.incoming("unschedulable", e.last_event or fw.EVENT_UNSCHEDULED_POD_ADD.label)

    def requeue_failed(
        self, key: str, error: bool = False, rejected_by: frozenset[str] = frozenset(), pod: dict | None = None
    ) -> None:
        """AddUnschedulableIfNotPresent after a failed attempt: errors, and failures no
        plugin owns, go to backoff; a pod the plugins rejected waits in unschedulable
        unless an event seen while it was in flight is worth a retry."""
        if self.in_flight == key:
            self.in_flight = None
        seen = self.in_flight_events.pop(key, [])
        e = self.entries.get(key)
        if e is None:
            return
        if pod is not None:
            e.pod = pod
        # no plugin to blame counts as an error (upstream's ConsecutiveErrorsCount): its
        # backoff is not cut short when activeQ runs dry
        e.errored = error or not rejected_by
        e.rejected_by = frozenset() if error else rejected_by
        e.attempts += 1
        e.backoff_until = self.clock() + min(self.max_backoff, self.initial_backoff * 2 ** (e.attempts - 1))
        e.unschedulable_since = self.clock()
        strategy = QUEUE_AFTER_BACKOFF if error or not e.rejected_by else QUEUE_SKIP
        if strategy == QUEUE_SKIP:
            for ev, old, new in seen:
                if self.worth_requeuing(e, ev, old, new) != QUEUE_SKIP:
                    strategy = QUEUE_AFTER_BACKOFF
                    break
        self._requeue(e, strategy, fw.SCHEDULE_ATTEMPT_FAILURE)

    def _requeue(self, e: _Entry, strategy: int, event: str) -> str:
        """requeuePodWithQueueingStrategy: the queue the pod went to."""
        if strategy == QUEUE_SKIP:
            if e.key not in self.unschedulable:
                self.unschedulable.add(e.key)
                self.incoming("unschedulable", event)
            return "unschedulable"
        self.unschedulable.discard(e.key)
        e.gated = False
        e.gating = ""
        if e.backoff_until > self.clock():
            self._push_backoff(e, event)
            return "backoff"
        self._push_active(e, event)
        return "active"

    def release(self, key: str) -> None:
        """The pod left the scheduling cycle for a long binding cycle (KEP-5007 PreBind
        wait) or a pod group's cycle took it: no longer the pod being scheduled, not
        queued either (still in flight for events); ``done`` or ``requeue_failed`` follow."""
        if self.in_flight == key:
            self.in_flight = None
        if key in self.entries:
            self.in_flight_events.setdefault(key, [])
        self._in_active.discard(key)
        self._in_backoff.discard(key)
        self.unschedulable.discard(key)

    def done(self, key: str) -> None:
        """Scheduled: forget the pod."""
        if self.in_flight == key:
            self.in_flight = None
        self.delete(key)

    # -- cluster events -------------------------------------------------------
    def _hints_for(self, event: fw.ClusterEvent) -> _Matched:
        """The hints registered for events ``event`` matches, their plugins, and their
        Narrowings when every registration has one (cached)."""
        k = (event.resource, event.action)
        found = self._matching.get(k)
        if found is None:
            regs = [(r, f) for r, pairs in self.hints.items() if fw.match_cluster_events(r, event) for f in pairs]
            fns = [f for _, f in regs]
            narrowed = [(p, n) for r, (p, _) in regs if (n := self._narrowings.get((r, p))) is not None]
            found = self._matching[k] = (
                fns,
                frozenset(p for p, _ in fns),
                narrowed if len(narrowed) == len(regs) else None,
            )
        return found

    def interested(self, event: fw.ClusterEvent) -> bool:
        """isEventOfInterest: a wildcard, or an event some plugin registered."""
        return event.wildcard or bool(self._hints_for(event)[0])

    def worth_requeuing(self, e: _Entry, event: fw.ClusterEvent, old: Any, new: Any) -> int:
        """isPodWorthRequeuing: the hints of the plugins that rejected the pod, for the
        events they registered that match; any Queue (or a hint that fails) requeues."""
        rejectors = e.rejected_by
        if not rejectors:
            return QUEUE_AFTER_BACKOFF
        if event.wildcard:
            if isinstance(new, dict) and e.pod is not None:
                if (new.get("metadata") or {}).get("uid") != (e.pod.get("metadata") or {}).get("uid"):
                    return QUEUE_SKIP
            return QUEUE_AFTER_BACKOFF
        fns, plugins, _ = self._hints_for(event)
        if plugins.isdisjoint(rejectors):
            return QUEUE_SKIP
        pod = e.pod or {}
        for plugin, hint in fns:
            if plugin not in rejectors:
                continue
            if hint is None:
                return QUEUE_AFTER_BACKOFF
            try:
                verdict = hint(pod, old, new)
            except Exception:  # as upstream: an error counts as Queue, never a stuck pod
                log.exception("queueing hint of %s for %s failed", plugin, event.label)
                verdict = fw.QUEUE
            if verdict == fw.QUEUE:
                return QUEUE_AFTER_BACKOFF
        return QUEUE_SKIP

    def move_all(
        self,
        event: fw.ClusterEvent,
        old: Any = None,
        new: Any = None,
        pre_check: Callable[[_Entry], bool] | None = None,
    ) -> int:
        """MoveAllToActiveOrBackoffQueue: each unschedulable pod (passing ``pre_check``)
        whose rejecting plugins' hints answer Queue moves to backoff or active; the event
        is kept for the pods in flight. Returns how many moved."""
        if not self.unschedulable and not self.in_flight_events:
            return 0
        wildcard = event.wildcard
        plugins = self._hints_for(event)[1]
        if not wildcard and not plugins:
            return 0  # no plugin is interested in this event
        moved = 0
        gate_cares: dict[str, bool] = {}  # per gating plugin: does it register this event
        for key in list(self._candidates(event, old, new)):
            e = self.entries.get(key)
            if e is None:
                self.unschedulable.discard(key)
                continue
            if not wildcard and e.rejected_by and plugins.isdisjoint(e.rejected_by):
                continue  # none of the plugins that rejected it registered this event
            if pre_check is not None and not pre_check(e):
                continue
            if e.gated:
                cares = gate_cares.get(e.gating)
                if cares is None:
                    cares = gate_cares[e.gating] = any(
                        fw.match_cluster_events(r, event) for r in self.plugin_events.get(e.gating, ())
                    )
                if not cares:
                    continue  # the gating plugin does not care about this event
            if self.worth_requeuing(e, event, old, new) == QUEUE_SKIP:
                continue
            self._requeue(e, QUEUE_AFTER_BACKOFF, event.label)
            moved += 1
        for seen in self.in_flight_events.values():
            seen.append((event, old, new))
        return moved

    def flush_stale(self) -> None:
        """flushUnschedulablePodsLeftover: pods unschedulable for five minutes go back."""
        limit = self.clock() - UNSCHEDULABLE_TIMEOUT
        stale = {
            k for k in self.unschedulable if (e := self.entries.get(k)) is not None and e.unschedulable_since < limit
        }
        if stale:
            self.move_all(fw.EVENT_UNSCHEDULABLE_TIMEOUT, pre_check=lambda e: e.key in stale)

    # -- popping --------------------------------------------------------------
    def _flush_backoff(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, key = heapq.heappop(self._backoff)
            if key in self._in_backoff:
                e = self.entries.get(key)
                self._in_backoff.discard(key)
                if e is not None:
                    self._push_active(e, fw.BACKOFF_COMPLETE)

    def pop_nowait(self) -> str | None:
        self._flush_backoff()
        while self._active:
            _, _, _, key = heapq.heappop(self._active)
            if key in self._in_active:
                self._in_active.discard(key)
                self.in_flight = key
                self.in_flight_events[key] = []
                return key
        # activeQ empty: take a pod backing off after "unschedulable" early (not after errors)
        for i, (_, _, key) in enumerate(sorted(self._backoff)):
            e = self.entries.get(key)
            if key in self._in_backoff and e is not None and not e.errored:
                self._in_backoff.discard(key)
                self._backoff = [x for x in self._backoff if x[2] != key]
                heapq.heapify(self._backoff)
                self.in_flight = key
                self.in_flight_events[key] = []
                self.incoming("active", fw.POP_FROM_BACKOFF_Q)
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
