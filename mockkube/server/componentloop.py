"""The components' own event loop, on a thread of its own.

The scheduler, controllers, kubelets and drivers do the cluster's CPU work; on the API's
loop that work would be every request's latency (DESIGN.md principle 6). Here they run on
a second loop and reach the API only through the store (principle 2), which is safe
across threads. Python's GIL still shares one core between the two threads, but it hands
the API thread the interpreter every few milliseconds, so a request never waits for a
whole reconcile burst or an allocation to finish.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Awaitable, Callable

log = logging.getLogger("mockkube.components")


class ComponentLoop:
    def __init__(self, name: str = "mockkube-components") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        try:
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            self.loop.close()

    @property
    def on_loop(self) -> bool:
        return threading.get_ident() == self._thread.ident

    def submit(self, fn: Callable[..., Any], *args: Any) -> "asyncio.Future[Any]":
        """Run ``fn(*args)`` (sync or async) on the components' loop; await the result from
        any other loop."""

        async def call() -> Any:
            out = fn(*args)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), self.loop))

    def run(self, fn: Callable[..., Any], *args: Any, timeout: float | None = None) -> Any:
        """The same, blocking the calling thread (for synchronous callers such as tests)."""

        async def call() -> Any:
            out = fn(*args)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the loop (its tasks are cancelled) and wait for the thread, at most ``timeout``.
        The thread is a daemon: one stuck in pure Python cannot keep the process alive."""
        if self.loop.is_closed():
            return
        try:
            self.loop.call_soon_threadsafe(self.loop.stop)
        except RuntimeError:
            return
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("components' loop did not stop within %.1fs", timeout)
