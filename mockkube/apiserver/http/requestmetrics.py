"""kube-apiserver's request metrics: ``apiserver_request_total`` and
``apiserver_request_duration_seconds`` (labels as upstream's endpoints/metrics), and
``apiserver_storage_objects`` counted from the store's cache when /metrics is scraped."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web
from prometheus_client.core import GaugeMetricFamily

from mockkube.machinery.metrics import Metrics

TARGET = web.RequestKey("mockkube.target", object)  # the request's parsed Target, set by the API handler

# upstream's buckets for apiserver_request_duration_seconds
DURATION_BUCKETS = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    15,
    20,
    30,
    45,
    60,
)
_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
_CONNECT = ("exec", "attach", "portforward", "proxy")


def verb_of(request: web.Request, target: Any) -> str:
    """Upstream's metric verb: LIST/WATCH for collections, APPLY for apply patches, ..."""
    m = request.method
    if target.sub in _CONNECT:
        return "CONNECT"
    if m == "GET":
        if target.name:
            return "GET"
        return "WATCH" if request.query.get("watch") in ("1", "true") else "LIST"
    if m == "PATCH" and request.headers.get("Content-Type", "").startswith("application/apply-patch"):
        return "APPLY"
    if m == "DELETE" and not target.name:
        return "DELETECOLLECTION"
    return m


def scope_of(target: Any) -> str:
    if target.name:
        return "resource"
    return "namespace" if target.namespace else "cluster"


def middleware(metrics: Metrics):
    total = metrics.counter(
        "apiserver_request_total",
        "Counter of apiserver requests broken out for each verb, dry run value, group, version, "
        "resource, scope, component, and HTTP response code.",
        _LABELS + ("code",),
    )
    duration = metrics.histogram(
        "apiserver_request_duration_seconds",
        "Response latency distribution in seconds for each verb, dry run value, group, "
        "version, resource, subresource, scope and component.",
        _LABELS,
        DURATION_BUCKETS,
    )

    # the children of one label set, looked up once (prometheus_client's labels() takes a
    # lock and validates the values on every call); metrics are never cleared
    children: dict[tuple, tuple] = {}

    def child(labels: tuple, code: str) -> tuple:
        key = labels + (code,)
        hit = children.get(key)
        if hit is None:
            # long-running requests have no latency SLI: no histogram series for them
            timed = labels[0] not in ("WATCH", "CONNECT")
            hit = children[key] = (total.labels(*labels, code), duration.labels(*labels) if timed else None)
        return hit

    @web.middleware
    async def request_metrics(request: web.Request, handler):
        start = time.perf_counter()
        code = 500
        try:
            resp = await handler(request)
            code = resp.status
            return resp
        except web.HTTPException as e:
            code = e.status
            raise
        finally:
            target = request.get(TARGET)
            if target is not None and target.rt is not None:
                verb = verb_of(request, target)
                labels = (
                    verb,
                    "All" if request.query.get("dryRun") == "All" else "",
                    target.group,
                    target.version,
                    target.rt.plural,
                    target.sub,
                    scope_of(target),
                    "apiserver",
                )
                counter, histogram = child(labels, str(code))
                counter.inc()
                if histogram is not None:
                    histogram.observe(time.perf_counter() - start)

    return request_metrics


class StorageObjects:
    """``apiserver_storage_objects{resource}``: objects stored per resource, read at scrape."""

    def __init__(self, store: Any, registry: Any) -> None:
        self.store = store
        self.registry = registry

    def collect(self):
        g = GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=["resource"],
        )
        seen = set()
        for rt in self.registry.all():
            if rt.storage_key in seen:
                continue
            seen.add(rt.storage_key)
            name = rt.plural if not rt.group else f"{rt.plural}.{rt.group}"
            try:
                g.add_metric([name], len(self.store.cache(rt)))
            except KeyError:
                continue
        yield g
