"""Clocks for tests that drive time instead of waiting for it.

``Server(clock=FakeClock())`` makes every time-based behaviour (binding-condition
timeouts, attach delays, grace periods) read a clock that stands still; after moving it,
``resync_components(server)`` (``ThreadedCluster.advance`` and ``Server.move_clock`` do it)
makes the components look again at what became due. Any server's clock can also be frozen
and moved at run time: see ``mockkube.machinery.clock.Clock``.
"""

from __future__ import annotations

from typing import Any

from mockkube.machinery.clock import Clock


class FakeClock(Clock):
    """A clock that stands still until a test moves it (``advance``, or ``t`` directly)."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        super().__init__(start=t, frozen=True)

    @property
    def t(self) -> float:
        return self()

    @t.setter
    def t(self, value: float) -> None:
        self.set(value)


def resync_components(server: Any) -> int:
    """Ask every started component that has ``resync()`` to re-check time-based state."""
    return server.clock_changed()
