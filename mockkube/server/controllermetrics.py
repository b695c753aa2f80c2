"""Per-controller work queue metrics, as client-go's workqueue exposes them:
``workqueue_depth{name}`` and ``workqueue_adds_total{name}``, read from the running
components' queues when /metrics is scraped (nothing is updated on the hot path), and
``mockkube_simulated_nodes``."""

from __future__ import annotations

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


def register(server: Any) -> None:
    try:
        server.metrics.registry.register(WorkqueueCollector(server))
    except ValueError:  # already registered
        pass
