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
    from mockkube.machinery.metrics import Metrics

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
    assert (
        await api.patch(
            "/api/v1/namespaces/default/configmaps/m",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"a": "2"}},
            ct="application/apply-patch+yaml",
            params={"fieldManager": "t", "force": "true"},
        )
    )[0] == 200
    _, text, _ = await api.get("/metrics")
    got = {
        (s.labels["verb"], s.labels["scope"], s.labels["code"]): s.value
        for s in _samples(text, "apiserver_request_total")
        if s.labels["resource"] == "configmaps"
    }
    assert got == {
        ("POST", "namespace", "201"): 1,
        ("GET", "resource", "200"): 1,
        ("GET", "resource", "404"): 1,
        ("LIST", "cluster", "200"): 1,
        ("APPLY", "resource", "200"): 1,
    }
    one = [s for s in _samples(text, "apiserver_request_total") if s.labels["verb"] == "POST"][0]
    assert one.labels["group"] == "" and one.labels["version"] == "v1" and one.labels["component"] == "apiserver"
    counts = [
        s
        for s in _samples(text, "apiserver_request_duration_seconds_count")
        if s.labels["resource"] == "configmaps" and s.labels["verb"] == "GET"
    ]
    assert counts and counts[0].value == 2
    stored = {s.labels["resource"]: s.value for s in _samples(text, "apiserver_storage_objects")}
    assert stored["configmaps"] >= 1 and stored["namespaces"] >= 4 and "resourceclaims.resource.k8s.io" in stored


async def test_scheduler_attempts_and_pending_pods():
    import asyncio
    import time

    import aiohttp

    from mockkube.testing.cluster import running_server

    async with running_server(components=True) as server, aiohttp.ClientSession() as s:

        async def post(body):
            async with s.post(server.url + "/api/v1/namespaces/default/pods", json=body) as r:
                assert r.status == 201, await r.text()

        await post({"metadata": {"name": "fits"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        await post(
            {
                "metadata": {"name": "nowhere"},
                "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "c", "image": "x"}]},
            }
        )

        async def scrape() -> str:
            async with s.get(server.url + "/metrics") as r:
                return await r.text()

        def attempts(text: str) -> dict:
            return {x.labels["result"]: x.value for x in _samples(text, "scheduler_schedule_attempts_total")}

        latest = {}

        async def settled() -> bool:
            latest["text"] = await scrape()
            a = attempts(latest["text"])
            return a.get("scheduled", 0) >= 1 and a.get("unschedulable", 0) >= 1

        deadline = time.monotonic() + 10
        while not await settled():  # poll the scrape with a deadline, as `eventually` does
            assert time.monotonic() < deadline, latest["text"][-2000:]
            await asyncio.sleep(0.01)
        pending = {x.labels["queue"]: x.value for x in _samples(latest["text"], "scheduler_pending_pods")}
        assert pending["unschedulable"] == 1 and pending["gated"] == 0
        assert all(
            x.labels["profile"] == "default-scheduler"
            for x in _samples(latest["text"], "scheduler_schedule_attempts_total")
        )


async def test_queueing_hints_decide_which_event_retries_an_unschedulable_pod():
    """An unschedulable pod is not retried on a node change its rejecting plugin
    (NodeAffinity) does not care about, and is on one that matters; the queue's moves
    show in scheduler_queue_incoming_pods_total{queue,event} under upstream's labels."""
    import asyncio
    import time

    import aiohttp

    from mockkube.testing.cluster import running_server

    async with running_server(components=True) as server, aiohttp.ClientSession() as s:
        base = server.url + "/api/v1"

        async def post(name, selector):
            body = {
                "metadata": {"name": name},
                "spec": {"nodeSelector": selector, "containers": [{"name": "c", "image": "x"}]},
            }
            async with s.post(base + "/namespaces/default/pods", json=body) as r:
                assert r.status == 201, await r.text()

        async def label_node(name, labels):
            async with s.patch(
                f"{base}/nodes/{name}",
                json={"metadata": {"labels": labels}},
                headers={"Content-Type": "application/merge-patch+json"},
            ) as r:
                assert r.status == 200, await r.text()

        async def node_of(pod):
            async with s.get(f"{base}/namespaces/default/pods/{pod}") as r:
                return (await r.json()).get("spec", {}).get("nodeName")

        async def incoming() -> dict:
            async with s.get(server.url + "/metrics") as r:
                text = await r.text()
            return {
                (x.labels["queue"], x.labels["event"]): x.value
                for x in _samples(text, "scheduler_queue_incoming_pods_total")
            }

        async def until(cond, what):
            deadline = time.monotonic() + 10
            while not (out := await cond()):
                assert time.monotonic() < deadline, what
                await asyncio.sleep(0.01)
            return out

        async with s.get(base + "/nodes") as r:
            node = next(
                n["metadata"]["name"]
                for n in (await r.json())["items"]
                if "node-role.kubernetes.io/control-plane" not in n["metadata"].get("labels", {})
            )
        await post("picky", {"disk": "ssd"})
        await post("witness", {"unrelated": "x"})
        await until(lambda: _ge(incoming(), ("unschedulable", "ScheduleAttemptFailure"), 2), "both pods unschedulable")
        # a label only the witness waits for: NodeAffinity's hint skips "picky"
        await label_node(node, {"unrelated": "x"})
        await until(lambda: node_of("witness"), "witness scheduled")
        got = await incoming()
        moved = sum(v for (q, e), v in got.items() if e == "NodeUpdateNodeLabel")
        assert moved == 1, got  # the witness only
        assert not await node_of("picky")
        await label_node(node, {"disk": "ssd"})
        assert await until(lambda: node_of("picky"), "picky scheduled") == node
        got = await incoming()
        assert sum(v for (q, e), v in got.items() if e == "NodeUpdateNodeLabel") == 2, got


async def _ge(metrics, key, n) -> bool:
    return (await metrics).get(key, 0) >= n
