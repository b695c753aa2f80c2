"""An injectable clock for tests that drive time instead of waiting for it.

``Server(clock=FakeClock())`` makes every time-based behaviour (binding-condition
timeouts, attach delays, grace periods) read this clock; after ``advance`` call
``resync_components(server)`` (``ThreadedCluster.advance`` does both) so the components
look again at what became due.
"""

from __future__ import annotations

from typing import Any


class FakeClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> float:
        self.t += seconds
        return self.t


def resync_components(server: Any) -> int:
    """Ask every started component that has ``resync()`` to re-check time-based state."""
    n = 0
    for c in list(getattr(server, "components", ())):
        fn = getattr(c, "resync", None)
        if callable(fn):
            fn()
            n += 1
    return n
