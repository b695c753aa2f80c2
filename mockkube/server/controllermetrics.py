"""Per-controller work queue metrics, as client-go's workqueue exposes them:
``workqueue_depth{name}`` and ``workqueue_adds_total{name}``, read from the running
components' queues when /metrics is scraped (nothing is updated on the hot path), and
``mockkube_simulated_nodes``; and what a long run must not accumulate (the soak benchmark,
tests/bench/soak.py, reads them): events held in the watch event logs, open watches and the
event loop's tasks."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily


class WorkqueueCollector:
    def __init__(self, server: Any) -> None:
        self.server = server

    def describe(self):
        return []

    def collect(self):
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
        adds = CounterMetricFamily("workqueue_adds_total", "Total number of adds handled by workqueue", labels=["name"])
        from mockkube.client.informer import WorkQueue

        seen: set[str] = set()
        for c in list(getattr(self.server, "components", None) or ()):
            q = getattr(c, "queue", None)
            name = getattr(c, "name", type(c).__name__)
            if isinstance(q, WorkQueue) and name not in seen:
                seen.add(name)
                depth.add_metric([name], len(q))
                adds.add_metric([name], q.adds)
        yield depth
        yield adds
        nodes = GaugeMetricFamily("mockkube_simulated_nodes", "Nodes whose kubelet mockkube simulates (running).")
        from mockkube.kubelet.cluster import runtime_for

        rt = runtime_for(getattr(self.server, "resources", None)) if getattr(self.server, "resources", None) else None
        nodes.add_metric([], len(getattr(rt.kubelet, "nodes", {})) if rt is not None else 0)
        yield nodes
        store = getattr(self.server, "store", None)
        if store is not None:
            held = GaugeMetricFamily(
                "mockkube_event_log_events", "Events held in the watch event logs (all resources)."
            )
            held.add_metric([], sum(len(log) for log in list(store._logs.values())))
            yield held
            watchers = GaugeMetricFamily("mockkube_watchers", "Open watches and in-process informers of the store.")
            watchers.add_metric([], store.hub.watcher_count())
            yield watchers
        try:
            tasks = len(asyncio.all_tasks())
        except RuntimeError:  # scraped outside the event loop
            return
        running = GaugeMetricFamily("mockkube_asyncio_tasks", "Tasks of the server's event loop.")
        running.add_metric([], tasks)
        yield running


def register(server: Any) -> None:
    try:
        server.metrics.registry.register(WorkqueueCollector(server))
    except ValueError:  # already registered
        pass
