"""/metrics: the server's own prometheus_client registry in Prometheus text format."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


async def test_metrics_endpoint_serves_the_servers_registry(api):
    c = api.server.metrics.counter("mockkube_test_things_total", "things counted by a test", ["kind"])
    c.labels(kind="a").inc(3)
    assert api.server.metrics.counter("mockkube_test_things_total", "again", ["kind"]) is c
    status, text, headers = await api.get("/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=")
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    samples = [s for s in fams["mockkube_test_things"].samples if s.name == "mockkube_test_things_total"]
    assert [(s.labels, s.value) for s in samples] == [({"kind": "a"}, 3.0)]


async def test_each_server_has_its_own_registry(api):
    from mockkube.metrics import Metrics

    other = Metrics()
    other.counter("mockkube_only_elsewhere_total", "not on this server").inc()
    status, text, _ = await api.get("/metrics")
    assert status == 200 and "mockkube_only_elsewhere_total" not in (text or "")
