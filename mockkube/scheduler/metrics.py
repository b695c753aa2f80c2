"""``scheduler_pending_pods{queue}`` read from the scheduling queue when /metrics is
scraped (the queue lives on the components' thread: only C-level copies are taken here)."""

from __future__ import annotations

from typing import Any

from prometheus_client.core import GaugeMetricFamily


class PendingPods:
    def __init__(self, queue: Any) -> None:
        self.queue = queue

    @classmethod
    def register(cls, metrics: Any, queue: Any) -> None:
        """One collector per server: a restarted scheduler replaces the previous one's queue."""
        existing = getattr(metrics, "_pending_pods", None)
        if existing is not None:
            existing.queue = queue
            return
        c = cls(queue)
        metrics.registry.register(c)
        metrics._pending_pods = c

    def collect(self):
        q = self.queue
        unschedulable = list(q.unschedulable)
        entries = q.entries
        gated = sum(1 for k in unschedulable if getattr(entries.get(k), "gated", False))
        g = GaugeMetricFamily(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means "
            "number of pods in activeQ; 'backoff' means number of pods in backoffQ; "
            "'unschedulable' means number of pods in unschedulablePods that the scheduler "
            "attempted to schedule and failed; 'gated' is the number of unschedulable pods "
            "that the scheduler never attempted to schedule because they are gated.",
            labels=["queue"],
        )
        g.add_metric(["active"], len(q._in_active) + (1 if q.in_flight else 0))
        g.add_metric(["backoff"], len(q._in_backoff))
        g.add_metric(["unschedulable"], len(unschedulable) - gated)
        g.add_metric(["gated"], gated)
        yield g
