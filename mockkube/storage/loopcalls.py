"""Calls handed to an event loop from another thread, one wake-up per burst.

``loop.call_soon_threadsafe`` writes to the loop's self-pipe on every call: a write that
reaches several informers and watches of the other loop paid one system call each (14 %
of the API process in a write burst). Calls handed over here are queued per loop and the
loop is woken once for all that arrive before it runs them, in the order they came.

Watches (``Watcher._put``) and informers (``Informer._on_event``) use it: for informers
it took the server's CPU per write in bench_writes.py from 1,110 to 940-1,030 us.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from typing import Callable

log = logging.getLogger("mockkube.loopcalls")


class _Calls:
    __slots__ = ("loop", "pending", "scheduled", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = weakref.ref(loop)  # the table below must not keep a loop alive
        self.pending: list[Callable[[], None]] = []
        self.scheduled = False

    def add(self, fn: Callable[[], None]) -> None:
        self.pending.append(fn)  # atomic; the flag is read only after this append
        if not self.scheduled:
            self.scheduled = True
            loop = self.loop()
            try:
                if loop is None:
                    raise RuntimeError("loop gone")
                loop.call_soon_threadsafe(self.run)
            except RuntimeError:  # the loop is closed: nobody will run these
                self.scheduled = False
                self.pending.clear()

    def run(self) -> None:
        self.scheduled = False  # before taking the list: a call added from now on schedules again
        pending, self.pending = self.pending, []
        for fn in pending:
            try:
                fn()
            except Exception:  # as the loop does for a failing callback: log, go on with the rest
                log.exception("callback %r failed", fn)


_calls: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Calls]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def call_soon_threadsafe(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    """``loop.call_soon_threadsafe(fn)``, sharing one wake-up of ``loop`` with the calls
    handed to it meanwhile; a call for a closed loop is dropped (nobody would run it)."""
    calls = _calls.get(loop)
    if calls is None:
        with _lock:
            calls = _calls.get(loop)
            if calls is None:
                calls = _calls[loop] = _Calls(loop)
    calls.add(fn)
