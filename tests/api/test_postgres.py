"""The same server runs on PostgreSQL: migrations, writes, restart, rising resourceVersions;
PostgreSQL stopped abruptly and started again mid-burst."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from mockkube.testing.cluster import running_server


def _replica(pg_url: str, listener=None):
    """A Store on the shared PostgreSQL database, as one API server holds it (migrated,
    loaded); ``listener`` stands in for its notification listener where a test hands it its
    notifications itself."""
    from mockkube.apiserver.resources import registry
    from mockkube.storage.db import make_engine, migrate
    from mockkube.storage.store import Store

    engine = make_engine(pg_url)
    migrate(engine)
    s = Store(engine, registry().child())
    if listener is not None:
        s._listener = listener
    s.load()
    return s


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


async def test_reading_the_shared_log_uses_the_index(pg_url):
    """Every replica reads the event log after its newest rv at every catch-up: the query
    must read the primary key's index, never the whole table, whatever the planner knows of
    the table (no statistics yet) and in the generic plan of the prepared statement (a
    sequential scan there was most of PostgreSQL's CPU in the multi-process set)."""
    import psycopg

    from mockkube.storage import sharedlog
    from mockkube.storage.db import make_engine

    async with running_server(db_url=pg_url) as server:
        async with aiohttp.ClientSession() as s:
            for i in range(20):
                async with s.post(
                    server.url + "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": f"ix-{i}"}}
                ) as r:
                    assert r.status == 201
    with psycopg.connect(sharedlog.conninfo(make_engine(pg_url)), autocommit=True) as c:
        plans = []
        for mode in ("force_custom_plan", "force_generic_plan"):
            c.execute(f"SET plan_cache_mode = {mode}")
            c.execute(f"PREPARE read_{mode} AS {sharedlog._READ.replace('%s', '$1', 1).replace('%s', '$2', 1)}")
            plan = "\n".join(r[0] for r in c.execute(f"EXPLAIN EXECUTE read_{mode}(5, {sharedlog._NO_END})"))
            plans.append(plan)
        assert all("events_pkey" in p and "Seq Scan" not in p for p in plans), plans


def test_a_replica_applies_the_events_notifications_carry(pg_url):
    """A replica applies another's writes from the notifications, which carry the event (no
    read of the log per write: that query, made under the store's lock, held up the replica's
    event loop); an event too large to be carried, and the writes after it, are read from the
    log: either way every write is delivered once, in rv order, with its exact bytes."""
    from mockkube.testing.waiting import until

    a, b = _replica(pg_url), _replica(pg_url)
    try:
        rt = a.registry.get("", "v1", "configmaps")
        delivered: list[tuple[str, int, bytes]] = []
        b.hub.add_listener(rt.storage_key, lambda ev: delivered.append((ev.type, ev.entry.rv, ev.entry.raw)))
        reads = 0
        read_after = b._dblog.read_after

        def counted(after: int):
            nonlocal reads
            reads += 1
            return read_after(after)

        b._dblog.read_after = counted
        written = []
        for i in range(20):  # one at a time, each applied by b before the next
            obj = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"carried-{i}", "namespace": "default"},
            }
            written.append(e := a.create(rt, obj))
            until(lambda: b.rv >= e.rv, timeout=10, what=f"b applies rv {e.rv}")
        assert reads <= 3, f"{reads} reads of the log for 20 carried writes"  # a periodic catch-up or two
        carried_reads = reads

        big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "too-large", "namespace": "default"}}
        big["data"] = {"x": "y" * 10_000}  # beyond a notification's 8,000 bytes
        written.append(a.create(rt, big))
        written.append(a.update(rt, dict(written[0].obj, data={"after": "big"}), written[0].rv))
        written.append(a.delete(rt, "default", "carried-1"))
        until(lambda: b.rv >= written[-1].rv, timeout=10, what="b applies the large write and those after it")
        assert reads > carried_reads  # the large one was read from the log

        mine = [d for d in delivered if d[1] >= written[0].rv]
        want = [(t, e.rv, e.raw) for t, e in zip(["ADDED"] * 21 + ["MODIFIED", "DELETED"], written)]
        assert mine == want
        assert b.get(rt, "default", "too-large").obj == written[20].obj
        assert b.get(rt, "default", "carried-0").obj["data"] == {"after": "big"}
        assert b.get(rt, "default", "carried-1") is None
    finally:
        a.close()
        b.close()


async def test_pod_admission_reads_the_cache_not_the_log(pg_url):
    """Priority and LimitRanger admission read PriorityClasses and LimitRanges as upstream's
    plugins read their informers' listers, from the cache: a pod create is no quorum read of
    the shared log (two round trips to PostgreSQL per pod, under the store's lock, in the
    multi-process set); they still apply what the cache holds."""
    path = "/api/v1/namespaces/default"
    async with running_server(db_url=pg_url) as server:
        async with aiohttp.ClientSession() as s:
            async with s.post(
                server.url + "/apis/scheduling.k8s.io/v1/priorityclasses",
                json={"metadata": {"name": "admission-default"}, "value": 7, "globalDefault": True},
            ) as r:
                assert r.status == 201, await r.text()
            lr = {"type": "Container", "default": {"cpu": "300m"}}
            async with s.post(
                server.url + path + "/limitranges", json={"metadata": {"name": "lr"}, "spec": {"limits": [lr]}}
            ) as r:
                assert r.status == 201, await r.text()
            reads = 0
            read_after = server.store._dblog.read_after

            def counted(after: int):
                nonlocal reads
                reads += 1
                return read_after(after)

            server.store._dblog.read_after = counted
            for i in range(10):
                body = {"metadata": {"name": f"admitted-{i}"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
                async with s.post(server.url + path + "/pods", json=body) as r:
                    assert r.status == 201, await r.text()
                    pod = await r.json()
                assert pod["spec"]["priority"] == 7 and pod["spec"]["priorityClassName"] == "admission-default"
                assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "300m"
            assert reads <= 3, f"{reads} reads of the shared log for 10 pod creates"  # periodic catch-ups


def test_a_write_waiting_for_anothers_uses_its_carried_event(pg_url):
    """A replica's own write whose rv is not the next one (another replica committed the one
    before, and its notification waits for the store's lock) applies that carried event and
    then its own, in order and without reading the log."""
    import threading

    import psycopg

    from mockkube.storage import sharedlog
    from mockkube.testing.waiting import until

    class NoListener:
        def start(self) -> None: ...
        def stop(self) -> None: ...

    a, b = _replica(pg_url), _replica(pg_url, NoListener())  # this test hands b its notifications
    listen = psycopg.connect(sharedlog.conninfo(b.engine), autocommit=True)
    try:
        listen.execute(f"LISTEN {sharedlog.CHANNEL}")
        rt = a.registry.get("", "v1", "configmaps")
        b.sync()
        delivered: list[tuple[str, int]] = []
        b.hub.add_listener(rt.storage_key, lambda ev: delivered.append((ev.entry.obj["metadata"]["name"], ev.entry.rv)))
        reads = 0
        read_after = b._dblog.read_after

        def counted(after: int):
            nonlocal reads
            reads += 1
            return read_after(after)

        b._dblog.read_after = counted
        x = a.create(
            rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "before", "namespace": "default"}}
        )
        payloads = until(lambda: [n.payload for n in listen.notifies(timeout=1, stop_after=1)], what="a's notification")
        with b.lock:  # b's loop is in a verb: its listener gets the notification and waits
            woken = threading.Thread(target=b._woken, args=(payloads,))
            woken.start()
            until(lambda: x.rv in b._carried, what="the carried event kept")
            y = b.create(
                rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after", "namespace": "default"}}
            )
        woken.join(10)
        assert y.rv > x.rv and delivered == [("before", x.rv), ("after", y.rv)]
        assert reads == 0
        assert b.get(rt, "default", "before").raw == x.raw
    finally:
        listen.close()
        a.close()
        b.close()


def test_a_replicas_own_writes_do_not_wake_it(pg_url):
    """Notifications of a replica's own writes (it applied them as it wrote) are left out by
    its listener, by the sending backend's pid: parsing them and waiting for the store's lock
    held up every write (the writer's loop handed its lock to the listening thread at each
    commit, doubling a write's time on one server)."""
    from mockkube.testing.waiting import until

    a, b = _replica(pg_url), _replica(pg_url)
    try:
        woken: list[str] = []
        wake = a._woken
        a._listener._wake = lambda payloads: (woken.extend(payloads or []), wake(payloads))
        rt = a.registry.get("", "v1", "configmaps")
        mine = [
            a.create(
                rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"own-{i}", "namespace": "default"}}
            )
            for i in range(10)
        ]
        theirs = b.create(
            rt, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs", "namespace": "default"}}
        )
        until(lambda: any(p.startswith(f"{theirs.rv}\n") for p in woken), timeout=10, what="b's notification")
        assert a.get(rt, "default", "theirs").rv == theirs.rv
        assert not [p for p in woken if int(p.split("\n", 1)[0]) in {e.rv for e in mine}]
    finally:
        a.close()
        b.close()
