"""Synchronous code that awaits: a greenlet bridge (SQLAlchemy's asyncio layer uses the same).

The scheduler's binding cycle is written as plain calls to a client. In its own process
that client talks HTTP, and a binding must not hold up the next scheduling cycle while the
API answers (upstream binds in a goroutine). ``spawn(fn, ...)`` runs ``fn`` in a greenlet
on the event loop's thread; inside it, ``await_only(coro)`` suspends ``fn`` until ``coro``
is done while the loop runs other work. Outside such a greenlet ``in_spawned()`` is False
and callers use their blocking path instead.
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any, Awaitable, Callable, TypeVar

import greenlet

T = TypeVar("T")


class _Spawned(greenlet.greenlet):
    """A greenlet started by ``spawn``: ``driver`` is the coroutine-side greenlet."""

    def __init__(self, fn: Callable[..., Any], driver: greenlet.greenlet) -> None:
        super().__init__(fn, driver)
        self.driver = driver


def in_spawned() -> bool:
    return isinstance(greenlet.getcurrent(), _Spawned)


def await_only(awaitable: Awaitable[T]) -> T:
    """Wait for ``awaitable`` from synchronous code running under ``spawn``."""
    current = greenlet.getcurrent()
    if not isinstance(current, _Spawned):
        raise RuntimeError("await_only() outside spawn()")
    return current.driver.switch(awaitable)


async def spawn(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)``; its ``await_only`` calls are awaited here. It sees the
    caller's context variables (a greenlet starts with an empty context otherwise): whom a
    controller acts as (``requestcontext.current_user``) holds in its reconcile too."""
    context = _Spawned(fn, greenlet.getcurrent())
    context.gr_context = contextvars.copy_context()
    result = context.switch(*args, **kwargs)
    while not context.dead:
        try:
            value = await result
        except BaseException:
            result = context.throw(*sys.exc_info())
        else:
            result = context.switch(value)
    return result
