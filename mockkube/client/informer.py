"""Informers and work queues for in-process components (client-go's pattern, in asyncio).

An informer turns the store's committed events for one resource into handler calls on
the event loop, after the writer's call has returned (a handler may therefore write).
A work queue de-duplicates keys so a controller reconciles each object once per burst.
"""

from __future__ import annotations

import asyncio
import heapq
import inspect
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Hashable

from mockkube.client import asyncbridge
from mockkube.machinery.registry import ResourceType
from mockkube.storage import loopcalls
from mockkube.storage.watch import Event

if TYPE_CHECKING:  # the store's module brings SQLAlchemy, which the component processes never use
    from mockkube.storage.store import Store

log = logging.getLogger("mockkube.informer")

YIELD_EVERY = 0.002  # seconds a controller works before letting the loop run others

Handler = Callable[[str, dict, dict | None], None]  # (type, obj, previous obj)


class Informer:
    """Delivers ADDED/MODIFIED/DELETED of one resource to handlers, in commit order.

    ``start()`` replays the current objects as ADDED (a synced cache), then follows.
    """

    def __init__(self, store: Store, rt: ResourceType) -> None:
        self.store = store
        self.rt = rt
        self.handlers: list[Handler] = []
        self._pending: list[Event] = []
        self._scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = False

    def add_handler(self, fn: Handler) -> None:
        self.handlers.append(fn)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        with self.store.lock:  # no write slips between the snapshot and the first event
            self.store.hub.add_listener(self.rt.storage_key, self._on_event)
            objs = self.store.objects(self.rt)
        self._started = True
        for obj in objs:
            self._dispatch("ADDED", obj, None)

    def stop(self) -> None:
        if self._started:
            with self.store.lock:
                self.store.hub.remove_listener(self.rt.storage_key, self._on_event)
            self._started = False

    def _on_event(self, ev: Event) -> None:
        # The writer may be on another thread (an HTTP client's write reaches the components'
        # loop): append is atomic, and the drain is handed over thread-safely.
        self._pending.append(ev)
        if not self._scheduled:
            self._scheduled = True
            loop = self._loop
            assert loop is not None, "an informer gets events only while started"
            if threading.get_ident() == self._thread:
                loop.call_soon(self._drain)
            else:  # one wake-up of that loop for every informer and watch a burst reaches
                loopcalls.call_soon_threadsafe(loop, self._drain)

    def _drain(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        for ev in pending:
            self._dispatch(ev.type, ev.entry.obj, ev.prev)

    def _dispatch(self, typ: str, obj: dict, prev: dict | None) -> None:
        for fn in self.handlers:
            try:
                fn(typ, obj, prev)
            except Exception:  # a handler bug must not stop delivery to the others
                log.exception("informer handler failed for %s", self.rt.plural)

    def pending(self) -> bool:
        """Events received but not yet delivered to the handlers."""
        return bool(self._pending)

    # lister ------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> dict | None:
        e = self.store.get(self.rt, namespace, name)
        return e.obj if e else None

    def list(self, namespace: str | None = None) -> list[dict]:
        return self.store.objects(self.rt, namespace)


class NoInformer:
    """The informer of a resource the server does not serve (a feature gate or
    --runtime-config turned it off): nothing to list, nothing ever happens."""

    def __init__(self, plural: str) -> None:
        self.plural = plural

    def add_handler(self, fn: Handler) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def pending(self) -> bool:
        return False

    def get(self, namespace: str, name: str) -> dict | None:
        return None

    def list(self, namespace: str | None = None) -> list[dict]:
        return []


class WorkQueue:
    """A de-duplicating queue of keys with delayed re-adds (rate-limited retries)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._failures: dict[Hashable, int] = {}
        # delayed re-adds: when each key is due, a heap of them and one timer for the first
        # (a timer per key held ~400 bytes: the Event TTL controller keeps one per Event)
        self._due: dict[Hashable, float] = {}
        self._heap: list[tuple[float, int, Hashable]] = []
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self.adds = 0  # workqueue_adds_total

    def add(self, key: Hashable) -> None:
        self.adds += 1
        if key in self._processing:
            self._dirty.add(key)
            return
        if key in self._queued:
            return
        self._queued.add(key)
        self._queue.put_nowait(key)

    def add_after(self, key: Hashable, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        due = self._due.get(key)
        if due is not None and due <= when:
            return  # already due sooner
        self._due[key] = when
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, key))
        if self._timer is None or when < self._timer.when():
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        heap = self._heap
        while heap and heap[0][0] <= now:
            when, _, key = heapq.heappop(heap)
            if self._due.get(key) == when:  # else re-added sooner: that entry fires it
                del self._due[key]
                self.add(key)
        if heap:
            self._timer = loop.call_at(heap[0][0], self._fire)

    def add_rate_limited(self, key: Hashable, base: float = 0.005, cap: float = 10.0) -> None:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self.add_after(key, min(cap, base * (2**n)))

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    async def get(self) -> Hashable:
        key = await self._queue.get()
        self._queued.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: Hashable) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._dirty.discard(key)
            self.add(key)

    def __len__(self) -> int:
        return self._queue.qsize()

    def idle(self) -> bool:
        """Nothing queued and nothing being reconciled (delayed re-adds are not work yet)."""
        return not self._queue.qsize() and not self._processing

    def shutdown(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
        self._due.clear()


class Controller:
    """A reconcile loop over a work queue; subclasses add informers and ``reconcile``."""

    name = "controller"
    workers = 1

    def __init__(self) -> None:
        self.queue = WorkQueue()
        self._tasks: list[asyncio.Task] = []
        self.informers: list[Informer] = []
        self._informer_retries: dict[int, asyncio.TimerHandle] = {}  # informers waiting for list/watch rights

    def reconcile(self, key: Hashable) -> None | Awaitable[None]:
        raise NotImplementedError

    def idle(self) -> bool:
        """No work queued or under way (for a reset that waits until the cluster settles)."""
        return self.queue.idle() and not any(inf.pending() for inf in self.informers)

    def follow_types(self, registry: Any, make: Callable[[Any], "Informer | None"]) -> None:
        """Also inform on resources served later (custom resources): ``make(rt)`` builds the
        informer of a new resource (or None to skip it); it runs on this controller's loop,
        whichever thread changed the registry. A resource no longer served under its storage
        key loses its informer."""
        self._follow = (registry, make)
        registry.subscribe(self._on_type)

    def _on_type(self, change: str, rt: Any) -> None:
        loop = getattr(self, "_loop", None)
        if loop is None or loop.is_closed():
            return
        try:
            if threading.get_ident() == self._thread:
                loop.call_soon(self._type_changed, change, rt)
            else:
                loop.call_soon_threadsafe(self._type_changed, change, rt)
        except RuntimeError:  # the loop has closed
            pass

    def _type_changed(self, change: str, rt: Any) -> None:
        if getattr(self, "_loop", None) is None:
            return
        registry, make = self._follow
        key = rt.storage_key
        have = [inf for inf in self.informers if inf.rt.storage_key == key]
        if change == "added" and not have:
            inf = make(rt)
            if inf is not None:
                self.informers.append(inf)
                self._start_informer(inf)
        elif change == "removed" and have and not any(r.storage_key == key for r in registry.all()):
            for inf in have:
                inf.stop()
                self.informers.remove(inf)

    async def start(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        for inf in self.informers:
            self._start_informer(inf)
        for _ in range(self.workers):
            self._tasks.append(asyncio.create_task(self._run(), name=self.name))

    def _start_informer(self, inf: Informer, attempt: int = 0) -> None:
        """Start ``inf`` once this controller may LIST and WATCH its resource, as a reflector
        does: while the server's authorizer denies it, log the 403 and try again with
        back-off (0.8 s doubling up to 30 s, client-go's reflector back-off)."""
        self._informer_retries.pop(id(inf), None)
        if getattr(self, "_loop", None) is None or inf not in self.informers:
            return
        az = inf.store.authorizer
        user = self.informer_identity() if az is not None else None
        if user is not None:
            from mockkube.apiserver.authz.components import may_list_and_watch

            ok, why = may_list_and_watch(az, user, inf.rt)
            if not ok:
                log.error("%s: failed to list %s: %s", self.name, inf.rt.plural, why)
                delay = min(30.0, 0.8 * 2**attempt)
                self._informer_retries[id(inf)] = self._loop.call_later(delay, self._start_informer, inf, attempt + 1)
                return
        inf.start()

    def informer_identity(self) -> dict | None:
        """Whom this controller's informers LIST and WATCH as: kube-controller-manager's
        shared informers use its own credentials (system:kube-controller-manager, whose role
        lists and watches everything), also with --use-service-account-credentials."""
        from mockkube.rules.identities import CONTROLLER_MANAGER

        return CONTROLLER_MANAGER

    def identity(self) -> dict | None:
        """Whom this controller's writes act as (mockkube/rules/identities.py); None: the default."""
        from mockkube.rules.identities import controller_user

        return controller_user(self.name)

    async def _run(self) -> None:
        from mockkube.machinery.requestcontext import set_user

        set_user(self.identity())  # this task's writes, as admission sees them
        # a client over HTTP (a controller-manager process): each reconcile runs in a greenlet
        # whose requests are awaited, so the loop (other controllers, the leader lease's
        # renewals) goes on while the API answers
        awaits = getattr(getattr(self, "client", None), "awaits_writes", False)
        # asyncio.Queue.get() does not yield while keys are waiting: hand the loop back every
        # few milliseconds so a burst (5,000 lease renewals) never holds up other components
        # or a stop request
        slice_end = time.monotonic() + YIELD_EVERY
        while True:
            if time.monotonic() > slice_end:
                await asyncio.sleep(0)
                slice_end = time.monotonic() + YIELD_EVERY
            key = await self.queue.get()
            try:
                out = await asyncbridge.spawn(self.reconcile, key) if awaits else self.reconcile(key)
                if inspect.isawaitable(out):
                    await out
                self.queue.forget(key)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                from mockkube.machinery.errors import APIError

                if isinstance(e, APIError) and e.code in (404, 409):
                    log.debug("%s: retry %s after %s", self.name, key, e)
                elif isinstance(e, APIError) and e.code == 403:  # RBAC mode: the role lacks a rule
                    log.error("%s: error syncing %s: %s", self.name, key, e.message)
                else:
                    log.exception("%s: reconcile %s failed", self.name, key)
                self.queue.add_rate_limited(key)
            finally:
                self.queue.done(key)

    async def stop(self) -> None:
        self._loop = None
        for timer in self._informer_retries.values():
            timer.cancel()
        self._informer_retries.clear()
        follow = getattr(self, "_follow", None)
        if follow is not None:
            follow[0].unsubscribe(self._on_type)
        for inf in self.informers:
            inf.stop()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        self._tasks = []
        self.queue.shutdown()
