"""The SQLite database failing under ``mockkube serve``: its file locked by another process,
its filesystem full. Writes answer a Status as kube-apiserver's when etcd fails (500
ServerTimeout with a Retry-After while storage is out of reach, which client-go and so
kubectl retry; 500 InternalError with the database's message when it is full), reads keep
answering from the cache, no acknowledged write is lost, no refused write is stored, the
file stays sound, and writes succeed again once the lock or the space returns. (PostgreSQL
stopped and started mid-burst: tests/api/test_postgres.py.)"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from mockkube.testing import binaries

pytestmark = pytest.mark.e2e

CMS = "/api/v1/namespaces/default/configmaps"


def _call(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict, dict, float]:
    req = urllib.request.Request(
        url,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
    )
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read()), dict(r.headers), time.perf_counter() - t0
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), dict(e.headers), time.perf_counter() - t0


def _create(url: str, name: str, size: int = 64) -> tuple[int, dict, dict, float]:
    return _call(url + CMS, "POST", {"metadata": {"name": name}, "data": {"k": "x" * size}})


def _stored_names(db: str) -> set[str]:
    """The ConfigMaps the database file holds (read past the server's cache), after checking
    the file's integrity."""
    conn = sqlite3.connect(db)  # read only: WAL readers share the writer's index file
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute(
            "SELECT name, data FROM objects WHERE resource = 'core/configmaps' AND namespace = 'default'"
        )
        names = set()
        for name, data in rows:
            if name == "kube-root-ca.crt":  # the cluster's own
                continue
            assert json.loads(data)["metadata"]["name"] == name  # every stored object whole
            names.add(name)
        return names
    finally:
        conn.close()


def _serve(argv_prefix: list[str], db_url: str) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen(
        [*argv_prefix, sys.executable, "-m", "mockkube", "serve", "--port", "0", "--db", db_url, "--no-control-plane"],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    if not line.startswith("mockkube ready at "):
        p.kill()
        pytest.fail(f"server did not start: {line!r}")
    return p, line.split()[-1]


def _fastest_get_ms(url: str) -> float:
    return min(_call(url + "/api/v1/namespaces/default")[3] for _ in range(5)) * 1000


def test_a_file_locked_by_another_process(tmp_path):
    db = str(tmp_path / "db.sqlite")
    p, url = _serve([], f"sqlite:///{db}")
    try:
        acked = [n for n in (f"before-{i}" for i in range(20)) if _create(url, n)[0] == 201]
        assert len(acked) == 20
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")  # another process holds the database
        try:
            for i in range(5):
                code, st, headers, took = _create(url, f"locked-{i}")
                assert code == 500 and st["reason"] == "ServerTimeout", st
                assert st["message"] == (
                    "The create operation against configmaps could not be completed at this time, please try again."
                )
                assert st["details"]["retryAfterSeconds"] == 2 and headers["Retry-After"] == "2"
                assert took < 1.0  # refused promptly: the API's loop does not wait for the lock
            assert _call(f"{url}{CMS}/before-3")[0] == 200  # reads answer from the cache
            assert _fastest_get_ms(url) < 100
            # kubectl (client-go) retries on the Retry-After: it succeeds once the lock is gone
            kubectl = subprocess.Popen(
                [binaries.kubectl(), "--server", url, "create", "configmap", "by-kubectl", "--from-literal=k=v"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            time.sleep(1)  # the lock held while kubectl's first attempt is refused
        finally:
            lock.rollback()
            lock.close()
        out, err = kubectl.communicate(timeout=30)
        assert kubectl.returncode == 0, err
        assert _create(url, "after")[0] == 201
        acked += ["by-kubectl", "after"]
        assert _stored_names(db) == set(acked)
    finally:
        p.terminate()
        p.wait(10)


def test_a_full_filesystem(tmp_path):
    """The database on an 8 MiB tmpfs of its own (a mount namespace: ``unshare``), filled up
    by a file the test then removes."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode:
        pytest.skip("no unshare -rm: cannot mount a small filesystem")
    mnt = tmp_path / "small"
    mnt.mkdir()
    prefix = ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=8m tmpfs "{mnt}" && exec "$0" "$@"']
    p, url = _serve(prefix, f"sqlite:///{mnt}/db.sqlite")
    inside = f"/proc/{p.pid}/root{mnt}"  # the server's view of its filesystem
    try:
        acked = [n for n in (f"before-{i}" for i in range(20)) if _create(url, n, 2048)[0] == 201]
        assert len(acked) == 20
        with open(f"{inside}/filler", "wb") as f:  # the disk fills up
            try:
                while True:
                    f.write(b"\0" * (64 << 10))
                    f.flush()
            except OSError:
                pass
        refused: list[str] = []
        for i in range(3000):  # what room the database had left goes first
            name = f"filling-{i}"
            code, st, _, took = _create(url, name, 2048)
            if code == 201:
                acked.append(name)
                continue
            assert code == 500 and st["reason"] == "InternalError", st
            assert st["message"] == "Internal error occurred: database or disk is full", st
            assert took < 1.0
            refused.append(name)
            if len(refused) == 5:
                break
        assert len(refused) == 5, "the database never filled up"
        assert _call(f"{url}{CMS}/before-3")[0] == 200  # reads answer from the cache
        assert _fastest_get_ms(url) < 100
        assert all(_call(f"{url}{CMS}/{n}")[0] == 404 for n in refused)
        os.remove(f"{inside}/filler")  # space returns
        deadline = time.monotonic() + 10
        while (code := _create(url, "after")[0]) != 201:
            assert time.monotonic() < deadline, f"writes did not recover: {code}"
            time.sleep(0.1)
        acked.append("after")
        # a copy of the quiet database (SQLite would follow /proc/PID/root to this namespace's view)
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{inside}/db.sqlite{suffix}", tmp_path / f"copy.sqlite{suffix}")
        assert _stored_names(str(tmp_path / "copy.sqlite")) == set(acked)  # none lost, none refused stored
        print(f"{len(acked) - 21} writes fitted after the filesystem filled; refused then: {refused}")
    finally:
        p.terminate()
        p.wait(10)
