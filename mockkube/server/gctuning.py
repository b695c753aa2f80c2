"""Garbage-collector settings for a long-running server process.

A cluster keeps hundreds of thousands of small, long-lived containers (cached objects,
informer views); CPython's default gen-0 threshold of 700 allocations makes it traverse
young objects thousands of times a second while a burst of watch events is decoded, and
the older generations again and again (a py-spy profile of the scheduler process put a
fifth of its samples in collections). Objects here die by reference count; cycles are rare,
so collecting less often costs little memory. What exists once the server has started is
frozen out of the collector's view altogether.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)


def tune() -> None:
    """Collect less often (call once at process start)."""
    gc.set_threshold(*THRESHOLDS)


def settle() -> None:
    """After start-up: move everything alive now out of future collections."""
    gc.collect()
    gc.freeze()
