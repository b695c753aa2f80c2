"""Waiting for state that lives outside the test process (a served cluster, a subprocess).

Prefer a watch (``kubectl wait``, an informer) where one exists; where none does, poll
with a deadline rather than sleeping for a fixed time.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def until(cond: Callable[[], T], timeout: float = 30.0, what: str = "condition", interval: float = 0.05) -> T:
    """Call ``cond`` until it returns something truthy and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        out = cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        time.sleep(interval)


async def eventually(cond: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """``until`` for asyncio tests on the server's own loop: yields so components can run."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        out = cond()
        if out:
            return out
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s")
        await asyncio.sleep(0.001)


async def settle(rounds: int = 50) -> None:
    """Let queued informer events and reconciles run (for asserting that nothing happens)."""
    import asyncio

    for _ in range(rounds):
        await asyncio.sleep(0)
