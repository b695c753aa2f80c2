"""The kubelet's container restart back-off (``pkg/kubelet/kuberuntime`` doBackOff over
``flowcontrol.Backoff``): the first restart is at once; after that each exit waits 10 s,
doubling to 5 min; an entry is forgotten once a container ran for twice the maximum.
Pure: times come from the caller (the cluster's clock)."""

from __future__ import annotations

from dataclasses import dataclass

INITIAL = 10.0
MAXIMUM = 300.0


@dataclass
class Backoff:
    duration: float = 0.0  # 0: no entry yet
    last_update: float = 0.0

    def in_backoff_since(self, finished: float, now: float) -> bool:
        """Whether a restart of a container that finished at ``finished`` must still wait."""
        return self.duration > 0 and now - finished < self.duration

    def until(self, finished: float) -> float:
        return finished + self.duration

    def next(self, finished: float) -> None:
        """Record a restart (flowcontrol.Backoff.Next)."""
        if self.duration == 0 or finished - self.last_update > 2 * MAXIMUM:
            self.duration = INITIAL
        else:
            self.duration = min(self.duration * 2, MAXIMUM)
        self.last_update = finished

    def describe(self) -> str:
        """As Go prints a time.Duration: 10s, 1m20s, 5m0s."""
        s = int(self.duration)
        return f"{s // 60}m{s % 60}s" if s >= 60 else f"{s}s"
