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


def _samples(text: str, name: str) -> list:
    return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == name]


async def test_apiserver_request_metrics_count_verbs_codes_and_scopes(api):
    cm = {"metadata": {"name": "m"}, "data": {"a": "1"}}
    assert (await api.post("/api/v1/namespaces/default/configmaps", cm))[0] == 201
    assert (await api.get("/api/v1/namespaces/default/configmaps/m"))[0] == 200
    assert (await api.get("/api/v1/namespaces/default/configmaps/nope"))[0] == 404
    assert (await api.get("/api/v1/configmaps"))[0] == 200
    assert (await api.patch("/api/v1/namespaces/default/configmaps/m", {"apiVersion": "v1", "kind": "ConfigMap",
                                                                     "metadata": {"name": "m"}, "data": {"a": "2"}},
                            ct="application/apply-patch+yaml", params={"fieldManager": "t", "force": "true"}))[0] == 200
    _, text, _ = await api.get("/metrics")
    got = {(s.labels["verb"], s.labels["scope"], s.labels["code"]): s.value
           for s in _samples(text, "apiserver_request_total") if s.labels["resource"] == "configmaps"}
    assert got == {("POST", "namespace", "201"): 1, ("GET", "resource", "200"): 1, ("GET", "resource", "404"): 1,
                   ("LIST", "cluster", "200"): 1, ("APPLY", "resource", "200"): 1}
    one = [s for s in _samples(text, "apiserver_request_total") if s.labels["verb"] == "POST"][0]
    assert one.labels["group"] == "" and one.labels["version"] == "v1" and one.labels["component"] == "apiserver"
    counts = [s for s in _samples(text, "apiserver_request_duration_seconds_count")
              if s.labels["resource"] == "configmaps" and s.labels["verb"] == "GET"]
    assert counts and counts[0].value == 2
    stored = {s.labels["resource"]: s.value for s in _samples(text, "apiserver_storage_objects")}
    assert stored["configmaps"] >= 1 and stored["namespaces"] >= 4 and "resourceclaims.resource.k8s.io" in stored
