"""A reset (Server.reset) brings custom resources back to the baseline: CRDs created since
stop being served, CRDs deleted since are served again with their objects."""

from __future__ import annotations

import copy

import aiohttp
from test_crds import BASE, CRD, widget

from mockkube.server.server import Server

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def test_reset_restores_custom_resource_serving():
    server = Server(port=0, components=False, component_thread=False)
    server.open_store()
    crd_rt = server.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    server.resources.create(crd_rt, "", copy.deepcopy(CRD))
    server.resources.create(server.registry.get("example.com", "v1", "widgets"), "default", widget("kept"))
    await server.start()
    try:
        await server.settled()
        async with aiohttp.ClientSession() as s:
            later = copy.deepcopy(CRD)
            later["metadata"]["name"] = "gadgets.example.com"
            later["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
            assert (await s.post(server.url + CRDS, json=later)).status == 201
            assert (await s.delete(server.url + CRDS + "/widgets.example.com")).status in (200, 202)
            assert (await s.get(server.url + BASE)).status == 404

            await server.reset()

            async with s.get(server.url + BASE + "/kept") as r:
                assert r.status == 200
            assert (await s.get(server.url + "/apis/example.com/v1/namespaces/default/gadgets")).status == 404
            async with s.get(server.url + "/apis/example.com/v1") as r:
                names = {x["name"] for x in (await r.json())["resources"]}
            assert "widgets" in names and "gadgets" not in names
    finally:
        await server.stop()


def test_cluster_handle_installs_crds_and_reset_removes_them():
    from pathlib import Path

    import mockkube

    crd = Path(__file__).parents[1] / "e2e" / "manifests" / "crontab-crd.yaml"
    with mockkube.Cluster(profile={"nodes": []}) as c:
        installed = c.install_crds(str(crd))
        assert installed[0]["status"]["acceptedNames"]["kind"] == "CronTab"
        r = c.http.post(
            c.url + c.resource_path("crontab", "default"),
            json={
                "apiVersion": "stable.example.com/v1",
                "kind": "CronTab",
                "metadata": {"name": "t"},
                "spec": {"cronSpec": "* * * * *"},
            },
        )
        assert r.status_code == 201, r.text
        assert c.get("ct", "t", "default")["spec"]["replicas"] == 1
        c.reset()
        assert c.http.get(c.url + "/apis/stable.example.com/v1").status_code == 404
