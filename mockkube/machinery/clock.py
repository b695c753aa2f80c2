"""The cluster's clock: what every time-based behaviour reads (timestamps, binding and
toleration timeouts, grace periods, pod run times, leases, CronJobs).

A ``Clock`` follows the wall clock until a test or a user freezes, moves or sets it; it
never needs the server to be restarted, so the same controls work from Python, over HTTP
(``/mockkube/v1/clock``) and from the CLI (``mockkube clock``).
"""

from __future__ import annotations

import time
from typing import Callable


class Clock:
    """Wall time plus an offset, or a frozen instant. Moving it never goes through the
    components: after a change, the server asks them to look again (``Server.clock_changed``)."""

    def __init__(
        self, start: float | None = None, frozen: bool = False, source: Callable[[], float] = time.time
    ) -> None:
        self._source = source
        now = source()
        self._offset = 0.0 if start is None else start - now
        self._frozen_at: float | None = (now + self._offset) if frozen else None
        self._initial = (self._offset, self._frozen_at)

    def __call__(self) -> float:
        if self._frozen_at is not None:
            return self._frozen_at
        return self._source() + self._offset

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("the clock only moves forward; use set() to go back")
        if self._frozen_at is not None:
            self._frozen_at += seconds
        else:
            self._offset += seconds
        return self()

    def set(self, t: float) -> float:
        if self._frozen_at is not None:
            self._frozen_at = t
        else:
            self._offset = t - self._source()
        return self()

    def freeze(self) -> float:
        if self._frozen_at is None:
            self._frozen_at = self()
        return self._frozen_at

    def unfreeze(self) -> float:
        """Run on from the frozen instant (the offset keeps what the clock was moved by)."""
        if self._frozen_at is not None:
            self._offset = self._frozen_at - self._source()
            self._frozen_at = None
        return self()

    def state(self) -> dict:
        return {"now": self(), "frozen": self.frozen}

    def reset(self) -> float:
        """Back to how the clock started: a frozen clock to its first instant, a running one
        to wall time plus its first offset."""
        self._offset, self._frozen_at = self._initial
        return self()
