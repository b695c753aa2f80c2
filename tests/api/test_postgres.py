"""The same server runs on PostgreSQL: migrations, writes, restart, rising resourceVersions."""

from __future__ import annotations

import aiohttp

from mockkube.testing.cluster import running_server


async def test_postgres_store_survives_restart(pg_url):
    path = "/api/v1/namespaces/default/configmaps"
    async with running_server(db_url=pg_url) as server:
        async with aiohttp.ClientSession() as s:
            async with s.post(server.url + path, json={"metadata": {"name": "pg"}, "data": {"a": "1"}}) as r:
                assert r.status == 201
                first = await r.json()
            async with s.put(server.url + path + "/pg", json=dict(first, data={"a": "2"})) as r:
                assert r.status == 200
            async with s.put(server.url + path + "/pg", json=dict(first, data={"a": "3"})) as r:
                assert r.status == 409  # stale resourceVersion
    async with running_server(db_url=pg_url) as server:
        async with aiohttp.ClientSession() as s:
            async with s.get(server.url + path + "/pg") as r:
                again = await r.json()
            assert again["data"] == {"a": "2"} and again["metadata"]["uid"] == first["metadata"]["uid"]
            async with s.post(server.url + path, json={"metadata": {"name": "pg2"}}) as r:
                newer = await r.json()
            assert int(newer["metadata"]["resourceVersion"]) > int(again["metadata"]["resourceVersion"])
