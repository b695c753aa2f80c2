"""Several API servers (processes) serving one cluster from one PostgreSQL database.

Each replica keeps its own cache and watch history, fed from the shared event log: every
replica's watches deliver every event exactly once and in resourceVersion order, whichever
replica a write went through, however the writers' commits interleave, and when a writer's
commit comes late or never (mockkube/storage/sharedlog.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import aiohttp
import psycopg
import pytest

from mockkube.testing.waiting import eventually

CM = "/api/v1/namespaces/{ns}/configmaps"


def spawn_replica(db_url: str) -> subprocess.Popen:
    """``mockkube serve --no-components`` on a free port."""
    return subprocess.Popen(
        [sys.executable, "-m", "mockkube", "serve", "--db", db_url, "--port", "0", "--no-components"],
        stdout=subprocess.PIPE,
        text=True,
    )


def ready(proc: subprocess.Popen) -> str:
    """The URL a spawned replica prints once it serves."""
    line = proc.stdout.readline()
    if not line.startswith("mockkube ready at "):
        proc.kill()
        raise RuntimeError(f"API replica did not start: {line!r}")
    return line.split()[-1]


def start_replica(db_url: str) -> tuple[subprocess.Popen, str]:
    proc = spawn_replica(db_url)
    return proc, ready(proc)


@pytest.fixture(scope="module")
def replicas(pg_url):
    procs = [spawn_replica(pg_url) for _ in range(2)]  # both start at once
    try:
        yield [ready(proc) for proc in procs]
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


async def _namespace(s: aiohttp.ClientSession, url: str, name: str) -> None:
    async with s.post(url + "/api/v1/namespaces", json={"metadata": {"name": name}}) as r:
        assert r.status == 201, await r.text()


class Recorder:
    """A watch of one namespace's ConfigMaps: the events in the order they arrived."""

    def __init__(self, s: aiohttp.ClientSession, url: str, ns: str, rv: str) -> None:
        self.events: list[tuple[str, str, int]] = []  # (type, name, rv)
        self.task = asyncio.create_task(self._run(s, url + CM.format(ns=ns), rv))

    async def _run(self, s: aiohttp.ClientSession, url: str, rv: str) -> None:
        async with s.get(url, params={"watch": "1", "resourceVersion": rv}) as r:
            assert r.status == 200
            async for line in r.content:
                ev = json.loads(line)
                obj = ev["object"]
                self.events.append((ev["type"], obj["metadata"]["name"], int(obj["metadata"]["resourceVersion"])))

    def rvs(self) -> list[int]:
        return [rv for _, _, rv in self.events]


async def test_watches_on_every_replica_deliver_every_write_once_in_order(replicas):
    """Four writers, two on each replica, create and update ConfigMaps at once (with some
    conflicting updates whose resourceVersions are used and never committed): the watch on
    each replica sees exactly the acknowledged writes, each once, in rv order."""
    a, b = replicas
    ns = "replicas-watch"
    async with aiohttp.ClientSession() as s:
        await _namespace(s, a, ns)
        async with s.get(b + CM.format(ns=ns)) as r:  # B knows the namespace: it reads through to the log
            start = (await r.json())["metadata"]["resourceVersion"]
        watches = [Recorder(s, url, ns, start) for url in (a, b)]
        acked: dict[int, tuple[str, str]] = {}  # rv -> (type, name) of every acknowledged write
        conflicts = 0

        async def writer(url: str, who: str) -> None:
            nonlocal conflicts
            for i in range(25):
                name = f"{who}-{i}"
                async with s.post(url + CM.format(ns=ns), json={"metadata": {"name": name}, "data": {"v": "0"}}) as r:
                    assert r.status == 201, await r.text()
                    made = await r.json()
                acked[int(made["metadata"]["resourceVersion"])] = ("ADDED", name)
                # the other replica updates the same object: it may not have applied the create
                # yet, so this reads through to the log; its rv must be accepted there
                other = b if url == a else a
                made["data"] = {"v": "1"}
                async with s.put(other + CM.format(ns=ns) + "/" + name, json=made) as r:
                    assert r.status == 200, await r.text()
                    upd = await r.json()
                acked[int(upd["metadata"]["resourceVersion"])] = ("MODIFIED", name)
                # and a stale update (the create's rv) through the first: 409, nothing written
                made["data"] = {"v": "2"}
                async with s.put(url + CM.format(ns=ns) + "/" + name, json=made) as r:
                    assert r.status == 409, await r.text()
                    conflicts += 1

        await asyncio.gather(*(writer(url, f"{tag}{n}") for n in range(2) for tag, url in (("a", a), ("b", b))))
        newest = max(acked)
        await eventually(lambda: all(w.rvs() and w.rvs()[-1] >= newest for w in watches), timeout=30)
        for w in watches:
            w.task.cancel()
        want = sorted(acked)
        for w in watches:
            assert w.rvs() == want  # each acknowledged write once, in rv order, nothing else
            assert [(t, n) for t, n, _ in w.events] == [acked[rv] for rv in want]
        assert conflicts == 100


async def test_concurrent_updates_through_two_replicas_one_gets_409(replicas):
    """The same update (same resourceVersion) sent through both replicas at once, many
    times over: each time exactly one is applied, the other is a 409 Conflict."""
    a, b = replicas
    ns = "replicas-409"
    async with aiohttp.ClientSession() as s:
        await _namespace(s, a, ns)
        async with s.post(a + CM.format(ns=ns), json={"metadata": {"name": "c"}, "data": {"n": "0"}}) as r:
            obj = await r.json()
        for i in range(30):

            async def put(url: str, body: dict) -> tuple[int, dict]:
                async with s.put(url + CM.format(ns=ns) + "/c", json=body) as r:
                    return r.status, await r.json()

            bodies = [dict(obj, data={"n": f"{i}-{who}"}) for who in ("a", "b")]
            results = await asyncio.gather(put(a, bodies[0]), put(b, bodies[1]))
            codes = sorted(code for code, _ in results)
            assert codes == [200, 409], results
            conflict = next(body for code, body in results if code == 409)
            assert conflict["reason"] == "Conflict" and "the object has been modified" in conflict["message"]
            obj = next(body for code, body in results if code == 200)
        for url in (a, b):  # both replicas serve the winner's state
            async with s.get(url + CM.format(ns=ns) + "/c") as r:
                assert (await r.json())["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def _late_writer(pg_url: str, ns: str, name: str) -> tuple[psycopg.Connection, int]:
    """A writer that has taken its rv and written its rows but not committed yet (as a
    replica does between its INSERTs and COMMIT): (its connection, its rv)."""
    conn = psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://"))
    rv = conn.execute("SELECT nextval('mockkube_rv')").fetchone()[0]
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "uid": "late-" + name, "resourceVersion": str(rv)},
        "data": {"late": "yes"},
    }
    data = json.dumps(obj)
    conn.execute(
        "INSERT INTO events (rv, resource, namespace, name, type, data) VALUES (%s, 'core/configmaps', %s, %s, 'ADDED', %s)",
        (rv, ns, name, data),
    )
    conn.execute(
        "INSERT INTO objects (resource, namespace, name, uid, rv, data) VALUES ('core/configmaps', %s, %s, %s, %s, %s)",
        (ns, name, "late-" + name, rv, data),
    )
    return conn, rv


def _someone_waits(pg_url: str) -> bool:
    with psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0] > 0


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
async def test_a_late_commit_is_delivered_before_later_writes(pg_url, replicas, outcome):
    """rv N is taken and its rows written but not committed while rv N+1 commits through a
    replica: no replica delivers N+1 before N is settled; then the watches show N then N+1
    (commit), or N+1 alone (rollback: N is a gap)."""
    a, b = replicas
    ns = f"replicas-late-{outcome}"
    async with aiohttp.ClientSession() as s:
        await _namespace(s, a, ns)
        async with s.get(b + CM.format(ns=ns)) as r:
            start = (await r.json())["metadata"]["resourceVersion"]
        watches = [Recorder(s, url, ns, start) for url in (a, b)]
        conn, late_rv = _late_writer(pg_url, ns, "late")
        try:
            post = asyncio.create_task(s.post(a + CM.format(ns=ns), json={"metadata": {"name": "after"}}))
            # the write commits, then its replica waits for rv N before applying it
            await eventually(lambda: _someone_waits(pg_url), timeout=20)
            assert all(w.events == [] for w in watches) and not post.done()
            if outcome == "commit":
                conn.commit()
            else:
                conn.rollback()
        finally:
            conn.close()
        r = await asyncio.wait_for(post, 20)
        assert r.status == 201
        after_rv = int((await r.json())["metadata"]["resourceVersion"])
        r.release()
        assert after_rv > late_rv
        want = [("ADDED", "late", late_rv)] if outcome == "commit" else []
        want.append(("ADDED", "after", after_rv))
        await eventually(lambda: all(len(w.events) >= len(want) for w in watches), timeout=20)
        for w in watches:
            w.task.cancel()
            assert w.events == want
        async with s.get(b + CM.format(ns=ns) + "/late") as r:  # the late object is served too, or not at all
            assert r.status == (200 if outcome == "commit" else 404)


async def test_a_replica_killed_mid_burst_loses_no_acknowledged_write(pg_url, replicas):
    """Writers on a replica that is SIGKILLed mid-burst go on through another: every write
    acknowledged (by either) is stored and delivered once, in order, by the survivor's watch."""
    victim, url = start_replica(pg_url)
    survivor = replicas[1]
    ns = "replicas-kill"
    try:
        async with aiohttp.ClientSession() as s:
            await _namespace(s, survivor, ns)
            async with s.get(survivor + CM.format(ns=ns)) as r:
                start = (await r.json())["metadata"]["resourceVersion"]
            watch = Recorder(s, survivor, ns, start)
            acked: dict[str, int] = {}  # name -> rv of its acknowledged create

            async def create(target: str, name: str) -> int:
                async with s.post(target + CM.format(ns=ns), json={"metadata": {"name": name}}) as r:
                    if r.status == 409:  # an attempt that died with its replica had committed
                        async with s.get(target + CM.format(ns=ns) + "/" + name) as g:
                            return int((await g.json())["metadata"]["resourceVersion"])
                    assert r.status == 201, await r.text()
                    return int((await r.json())["metadata"]["resourceVersion"])

            async def writer(tag: str, first: str) -> None:
                target = first
                for i in range(40):
                    name = f"{tag}-{i}"
                    try:
                        acked[name] = await create(target, name)
                    except aiohttp.ClientError:  # its replica died: retry on the other
                        target = survivor
                        acked[name] = await create(target, name)

            writers = asyncio.gather(*(writer(f"w{n}", url if n % 2 else survivor) for n in range(4)))
            await eventually(lambda: len(acked) >= 30, timeout=60)
            victim.kill()
            await writers
            assert len(acked) == 160
            newest = max(acked.values())
            await eventually(lambda: watch.rvs() and watch.rvs()[-1] >= newest, timeout=30)
            watch.task.cancel()
            assert watch.rvs() == sorted(acked.values())
            async with s.get(survivor + CM.format(ns=ns)) as r:
                stored = {
                    o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in (await r.json())["items"]
                }
            assert stored == acked
    finally:
        victim.kill()
        victim.wait(10)


async def test_postgresql_restart_is_survived(pg, replicas):
    """PostgreSQL stops at once and starts again: the replicas keep serving; a watch opened
    before goes on delivering what is written through the other replica after the restart."""
    a, b = replicas
    ns = "replicas-pg-restart"
    async with aiohttp.ClientSession() as s:
        await _namespace(s, a, ns)
        async with s.get(b + CM.format(ns=ns)) as r:
            start = (await r.json())["metadata"]["resourceVersion"]
        watch = Recorder(s, b, ns, start)
        pg.restart()

        async def written(i: int) -> int | None:
            async with s.post(a + CM.format(ns=ns), json={"metadata": {"name": f"after-{i}"}}) as r:
                if r.status == 201:
                    return int((await r.json())["metadata"]["resourceVersion"])
            if r.status == 409:  # an attempt whose answer was an error had committed
                async with s.get(a + CM.format(ns=ns) + f"/after-{i}") as g:
                    return int((await g.json())["metadata"]["resourceVersion"])
            return None

        rvs = []
        for i in range(5):  # the first writes may meet connections the restart broke
            deadline = asyncio.get_running_loop().time() + 30
            while (rv := await written(i)) is None:
                assert asyncio.get_running_loop().time() < deadline, "writes do not succeed after the restart"
                await asyncio.sleep(0.1)
            rvs.append(rv)
        await eventually(lambda: len(watch.events) >= 5, timeout=30)
        watch.task.cancel()
        assert watch.rvs() == rvs
        async with s.get(b + CM.format(ns=ns) + "/after-4") as r:
            assert r.status == 200


def _replicas_on(port: str) -> list[int]:
    """Pids of the further API servers (``--reuse-port``) listening on ``port``."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if b"--reuse-port" in cmd and port.encode() in cmd:
            pids.append(int(d))
    return pids


async def test_serve_api_servers_shares_one_port_and_stops_together(pg_url):
    """``mockkube serve --api-servers 2``: a further API server process on the same port; new
    connections reach either and see one cluster; SIGTERM ends both, and so does SIGKILL.
    On a database of its own: the set runs the demo cluster's components, which the other
    tests' replicas (no components) must not share."""
    from mockkube.testing.postgres import TempPostgres

    own = TempPostgres().start()
    try:
        await _api_servers_share_one_port(own.url)
    finally:
        own.stop()


async def _api_servers_share_one_port(pg_url: str) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "mockkube", "serve", "--api-servers", "2"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "--api-servers above 1 needs --db postgresql://" in bad.stderr
    for stop in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen(
            [sys.executable, "-m", "mockkube", "serve", "--db", pg_url, "--port", "0", "--api-servers", "2"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline()
            assert line.startswith("mockkube ready at "), line
            url = line.split()[-1]
            port = url.rsplit(":", 1)[1]
            assert len(_replicas_on(port)) == 1
            for i in range(10):  # a connection each: the kernel spreads them over both processes
                name = f"spread-{stop}-{i}"
                async with aiohttp.ClientSession() as s:
                    async with s.post(url + CM.format(ns="default"), json={"metadata": {"name": name}}) as r:
                        assert r.status == 201, await r.text()
                    async with s.get(url + CM.format(ns="default") + "/" + name) as r:
                        assert r.status == 200  # whichever process answers
            proc.send_signal(stop)
            proc.wait(15)
            await eventually(lambda: not _replicas_on(port), timeout=10, what="the further API server ended")
        finally:
            if proc.poll() is None:
                proc.kill()


async def test_a_crd_created_through_one_replica_is_served_by_the_other(replicas):
    a, b = replicas
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.replicas.example.com"},
        "spec": {
            "group": "replicas.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    path = "/apis/replicas.example.com/v1/namespaces/default/widgets"
    async with aiohttp.ClientSession() as s:
        async with s.post(a + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd) as r:
            assert r.status == 201, await r.text()
        async with s.post(
            b + path, json={"apiVersion": "replicas.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
        ) as r:
            assert r.status == 201, await r.text()  # B serves the type at once: the write caught up
        async with s.get(a + path + "/w") as r:
            assert r.status == 200
