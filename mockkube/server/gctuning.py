"""Garbage-collector settings for a long-running server process.

A cluster keeps hundreds of thousands of small, long-lived containers (cached objects,
informer views); CPython's default gen-0 threshold of 700 allocations makes it traverse
young objects thousands of times a second while a burst of watch events is decoded, and
the older generations again and again (a py-spy profile of the scheduler process put a
fifth of its samples in collections). Objects here die by reference count; cycles are rare,
so collecting less often costs little memory. What exists once the server has started is
frozen out of the collector's view altogether.

Rare is not never: with these thresholds a full collection comes after about 10**8
allocations, and some cycles hold far more memory than their object count tells the
collector. A TLS connection that fails its handshake (plain HTTP sent to the TLS port, a
ClientHello abandoned) leaves its SSL protocol, transport and 256 KiB buffers in a cycle
through the exception's traceback and asyncio's accept frame; a thousand of them held 300 MB
until the next full collection. So full collections are also paced by memory, as Go's
collector is (GOGC): the ``Pacer`` reads the process's resident size every 2 s and, at a
quiet tick, collects when it stands 16 MiB above the size it settled at; what stays after a
collection is alive, and after a few retries becomes the new floor. A reset owes a
collection at once: the components it retires are garbage in cycles (the soak benchmark saw
each reset's informers, pod runs and event caches stay until a later full collection), one
that reaches the frozen objects too: the retired components were frozen with the rest when they
were new (``collect_retired``). Memory freed
by reference count (200 TLS connections holding half a request, then gone) stays with glibc's
allocator unless handed back: when more than 16 MiB of the heap is free, the Pacer trims it.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import time
from typing import Any, Callable

THRESHOLDS = (50_000, 20, 100)
PACE_SECONDS = 2.0
SLACK = 16 << 20  # bytes above the floor that a quiet tick lets stand
BUSY = 0.5  # share of a core above which a tick counts as a burst
BUSY_WRITES = 100  # or this many writes since the last tick (a burst on a machine short of CPU)
MAX_RETRY = 64.0  # seconds between collections that do not bring the size back, at most
OWED_WAIT = 30.0  # seconds an owed collection waits for a quiet tick, at most

_held = False  # collections stopped by hold()


def tune() -> None:
    """Collect less often (call once at process start)."""
    gc.set_threshold(*THRESHOLDS)


def hold() -> None:
    """No collections until ``release()`` or ``settle()``. A start builds what then lives on
    (modules, schemas, the bootstrapped store, the components): the server's start ran about
    150 collections under CPython's default thresholds, a full one among them, and two even
    under ``THRESHOLDS`` (young generations of 50,000 objects): 30-55 ms of CPU of a start
    that takes ~0.43 s. It leaves ~2,000 objects in reference cycles, which ``settle()``'s
    collection frees."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Collections as usual again, if ``hold()`` stopped them."""
    global _held
    if _held:
        gc.enable()
        _held = False


def settle() -> None:
    """After start-up: move everything alive now out of future collections."""
    gc.collect()
    gc.freeze()
    release()


def collect_retired() -> int:
    """A full collection that reaches the frozen objects too, then what survives is frozen
    again. The components a reset retires were alive at ``settle()`` (the first ones) or at the
    last such collection, so they sit in the permanent generation, which ``gc.collect()``
    never looks at: garbage in cycles there stays for the life of the process (the soak
    benchmark's server kept the first components, their informers' views of every object and
    the event recorders' caches, after the first reset)."""
    frozen = gc.get_freeze_count()
    if frozen:
        gc.unfreeze()
    try:
        return gc.collect()
    finally:
        if frozen:
            gc.freeze()


def resident_bytes() -> int | None:
    """The process's resident set size, or None where /proc does not tell it."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@functools.cache
def _glibc() -> Any:
    import ctypes  # here, not at start-up: only a running server paces

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = MallInfo2  # glibc 2.33 and later
    except (OSError, AttributeError):
        return None  # another C library: nothing is measured or handed back
    return libc if hasattr(libc, "malloc_trim") else None


def free_heap_bytes() -> int:
    """Heap memory freed but still held by glibc's allocator (0 where it cannot be known)."""
    libc = _glibc()
    if libc is None:
        return 0
    info = libc.mallinfo2()
    return int(info.fordblks + info.fsmblks)


def release_free_memory() -> None:
    """Hand freed heap memory back to the system: glibc keeps freed 256 KiB buffers in its
    arenas (its mmap threshold rises after the first such free), so the resident size would
    not come down after they are freed without this."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


class Pacer:
    """Every ``every`` seconds: hands back freed heap the allocator holds beyond the slack,
    and, at a quiet tick, runs a full collection while the resident size stands the slack
    above its floor (the size it settled at). A collection that brings it back resets the pace; one
    that does not is retried after 2, 4, 8, ... seconds (what was alive may be garbage by
    then: connections held open, then dropped), and after ``MAX_RETRY`` seconds of that the
    size is taken as the new floor, so a cluster that grew costs a handful of collections,
    not one every tick."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        every: float = PACE_SECONDS,
        activity: Callable[[], int] | None = None,
    ) -> None:
        self.loop, self.every = loop, every
        # a count that grows with each write (the store's resourceVersion): a process that
        # gets little CPU because the machine is loaded still counts as busy in a burst
        self.activity = activity
        self._writes = activity() if activity is not None else 0
        self.floor: int | None = None
        self.collections = 0
        self._retry = every
        self._next = 0.0
        self._cpu = time.process_time()
        self._timer: asyncio.TimerHandle | None = None
        self._owed: float | None = None  # when a collection was owed (``owe``)
        self._last_owed = -OWED_WAIT

    def owe(self) -> None:
        """A large graph of objects just became garbage in reference cycles (a reset's retired
        components: informers, work queues, event recorders with their caches, pod runs),
        which reference counting never frees: a full collection is due whatever the resident
        size says. It runs at the next quiet tick, or after ``OWED_WAIT`` seconds of busy
        ones; at most one every ``OWED_WAIT`` seconds (a test suite resets between its tests).
        Safe to call from any thread."""
        if self._owed is None:
            self._owed = time.monotonic()

    def start(self) -> Pacer:
        self.floor = resident_bytes()
        if self.floor is not None:
            self._timer = self.loop.call_later(self.every, self._tick)
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def due(self, rss: int) -> bool:
        assert self.floor is not None
        return rss > self.floor + SLACK

    def _tick(self) -> None:
        cpu = time.process_time()
        busy = (cpu - self._cpu) > self.every * BUSY
        self._cpu = cpu
        if self.activity is not None:
            writes = self.activity()
            busy = busy or writes - self._writes > BUSY_WRITES
            self._writes = writes
        self.check(self.loop.time(), busy)
        self._timer = self.loop.call_later(self.every, self._tick)

    def check(self, now: float, busy: bool = False) -> None:
        """``busy``: the process used more than half a core, or wrote more than
        ``BUSY_WRITES`` objects, since the last look (a burst);
        a full collection waits for a quieter tick, so requests are not held up meanwhile."""
        rss = resident_bytes()
        if rss is None or self.floor is None:
            return
        if free_heap_bytes() > SLACK:  # freed by reference count, still held by the allocator
            release_free_memory()
            rss = resident_bytes() or rss
        owed, mono = self._owed, time.monotonic()
        if owed is not None and mono - self._last_owed >= OWED_WAIT and (not busy or mono - owed >= OWED_WAIT):
            self._owed, self._last_owed = None, mono
            collect_retired()
            release_free_memory()
            self.collections += 1
            rss = resident_bytes() or rss
        if self.due(rss) and now >= self._next and not busy:
            gc.collect()
            release_free_memory()
            self.collections += 1
            rss = resident_bytes() or rss
            if not self.due(rss):
                self._retry = self.every
            elif self._retry > MAX_RETRY:  # high for minutes, collections or not: it is alive
                self.floor, self._retry = rss, self.every
            else:
                self._next = now + self._retry
                self._retry *= 2
        self.floor = min(self.floor, rss)
