"""Prometheus metrics: one ``prometheus_client`` registry per Server.

Several clusters can live in one process (a pytest session), so metrics are never
registered in the library's global registry. A component asks ``server.metrics`` for a
metric by name; asking twice returns the same collector, so each component declares the
metrics it updates where it updates them, and ``GET /metrics`` exposes them all.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["Metrics", "CONTENT_TYPE_LATEST"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._by_name: dict[str, object] = {}
        self._lock = threading.Lock()
        self.sources: list = []  # async () -> bytes: exposition of component processes

    def _get(self, cls, name: str, doc: str, labels: Sequence[str], **kw):
        with self._lock:
            m = self._by_name.get(name)
            if m is None:
                m = cls(name, doc, list(labels), registry=self.registry, **kw)
                self._by_name[name] = m
            elif not isinstance(m, cls):
                raise TypeError(f"metric {name} is already a {type(m).__name__}")
            return m

    def counter(self, name: str, doc: str, labels: Sequence[str] = ()) -> Counter:
        return self._get(Counter, name, doc, labels)

    def gauge(self, name: str, doc: str, labels: Sequence[str] = ()) -> Gauge:
        return self._get(Gauge, name, doc, labels)

    def histogram(
        self, name: str, doc: str, labels: Sequence[str] = (), buckets: Sequence[float] | None = None
    ) -> Histogram:
        kw = {"buckets": tuple(buckets)} if buckets else {}
        return self._get(Histogram, name, doc, labels, **kw)

    def gauge_family(
        self, name: str, doc: str, labels: Sequence[str], samples: Callable[[], Iterable[tuple[Sequence[str], float]]]
    ) -> None:
        """A gauge whose samples (label values, value) are made at each scrape: for one
        that never changes and has many children (a server's 238 feature gates cost a
        millisecond or two of every start as labelled children)."""
        from prometheus_client.core import GaugeMetricFamily

        class _Family:
            def describe(self):
                return [GaugeMetricFamily(name, doc, labels=list(labels))]

            def collect(self):
                fam = GaugeMetricFamily(name, doc, labels=list(labels))
                for values, value in samples():
                    fam.add_metric(list(values), value)
                return [fam]

        with self._lock:
            if name in self._by_name:
                raise TypeError(f"metric {name} is already registered")
            family = _Family()
            self.registry.register(family)
            self._by_name[name] = family

    def add_source(self, fn) -> None:
        """More exposition text (``async fn() -> bytes``): a component process's metrics,
        served on the same ``/metrics``."""
        self.sources.append(fn)

    def exposition(self) -> bytes:
        """The registry in Prometheus text format (what ``GET /metrics`` answers)."""
        return generate_latest(self.registry)
