"""The /mockkube/v1 endpoints (profile, podresources, device health, kubelet stop/start)."""

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from mockkube.apiserver.http.app import SERVER_KEY, status_errors
from mockkube.client.client import Client
from mockkube.config.profile import load
from mockkube.control import cluster as http
from mockkube.kubelet.cluster import ClusterRuntime
from mockkube.testing.cluster import running_server


async def test_endpoints():
    async with running_server() as server:
        rt = ClusterRuntime(server)
        await rt.start(load("nodes:\n- name: a\n  drivers:\n    gpu.example.com: {count: 2}\n"))
        app = web.Application(middlewares=[status_errors])
        app[SERVER_KEY] = server
        http.setup(app)
        client = TestClient(TestServer(app))
        await client.start_server()
        try:
            r = await client.post("/mockkube/v1/profile", data="nodes:\n- name: b\n  count: 2\n")
            assert r.status == 200, await r.text()
            assert (await r.json())["nodes"] == ["b-0", "b-1"]
            c = Client(server.resources, "t")
            assert c.get(c.rt("nodes"), "", "b-1") is not None
            r = await client.post("/mockkube/v1/profile", data="nodes:\n- name: b\n  count: zero\n")
            assert r.status == 422 and "line 3" in (await r.json())["message"]
            r = await client.get("/mockkube/v1/nodes/a/podresources")
            assert await r.json() == {"podResources": []}
            assert (await client.get("/mockkube/v1/nodes/zz/podresources")).status == 404
            r = await client.post(
                "/mockkube/v1/drivers/gpu.example.com/health",
                json={"pool": "a", "device": "gpu-1", "healthy": False, "effect": "NoExecute"},
            )
            assert (await r.json())["changed"] is True
            (sl,) = c.list(c.rt("resourceslices", "resource.k8s.io"))
            assert sl["spec"]["devices"][1]["taints"][0]["effect"] == "NoExecute"
            assert sl["spec"]["pool"]["generation"] == 2
            r = await client.post("/mockkube/v1/drivers/tpu.example.com/health", json={"pool": "a", "device": "x"})
            assert r.status == 404
            r = await client.post("/mockkube/v1/nodes/a/kubelet", json={"running": False})
            assert r.status == 200 and rt.kubelet.nodes["a"].running is False
        finally:
            await client.close()
            await rt.stop()
