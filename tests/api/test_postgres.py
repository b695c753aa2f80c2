"""The same server runs on PostgreSQL: migrations, writes, restart, rising resourceVersions;
PostgreSQL stopped abruptly and started again mid-burst."""

from __future__ import annotations

import asyncio
import time

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


async def test_postgres_stopped_and_started_mid_burst(pg):
    """Four clients write while PostgreSQL stops abruptly and starts again: meanwhile writes
    are refused at once with 500 ServerTimeout and a Retry-After (kube-apiserver's answer
    when etcd is out of reach), reads answer from the cache; writes succeed again after it
    is back, and every acknowledged write is in the database (a new server reads them)."""
    path = "/api/v1/namespaces/default/configmaps"
    acked: list[str] = []
    refused: list[dict] = []
    stop = asyncio.Event()
    async with running_server(db_url=pg.url) as server:
        async with aiohttp.ClientSession() as s:

            async def writer(i: int) -> None:
                n = 0
                while not stop.is_set():
                    name = f"burst-{i}-{n}"
                    n += 1
                    async with s.post(server.url + path, json={"metadata": {"name": name}}) as r:
                        if r.status == 201:
                            acked.append(name)
                            continue
                        refused.append({"http": r.status, "retry": r.headers.get("Retry-After"), **await r.json()})
                    await asyncio.sleep(0.05)

            writers = [asyncio.create_task(writer(i)) for i in range(4)]
            while len(acked) < 40:
                await asyncio.sleep(0.01)
            await asyncio.to_thread(pg.pause)
            await asyncio.sleep(1.0)  # the outage
            during = len(refused)
            async with s.get(server.url + path + "/" + acked[0]) as r:
                assert r.status == 200  # reads answer from the cache
            t0 = time.monotonic()
            await asyncio.to_thread(pg.resume)
            before = len(acked)
            while len(acked) < before + 20:
                assert time.monotonic() - t0 < 30, "writes did not recover"
                await asyncio.sleep(0.01)
            stop.set()
            await asyncio.gather(*writers)
    assert during > 0, "no write was refused while PostgreSQL was down"
    for st in refused:
        assert st["http"] == 500 and st["reason"] == "ServerTimeout" and st["retry"] == "2", st
        assert (
            st["message"]
            == "The create operation against configmaps could not be completed at this time, please try again."
        )
    async with running_server(db_url=pg.url) as server:
        async with aiohttp.ClientSession() as s:
            async with s.get(server.url + path) as r:
                stored = {o["metadata"]["name"] for o in (await r.json())["items"]}
    assert set(acked) <= stored  # no acknowledged write lost
