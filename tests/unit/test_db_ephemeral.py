"""The default embedded database: a SQLite file in a private temporary directory that ends
with the server (its pages in the OS's page cache, not the server's heap), as an in-memory
database ends with its process."""

from __future__ import annotations

import os
import subprocess
import sys

from sqlalchemy import text

from mockkube.apiserver.resources import registry
from mockkube.storage import db
from mockkube.storage.store import Store


def cm(name: str, **data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def test_default_database_is_a_private_file_that_goes_with_the_store():
    engine = db.make_engine(None)
    path = engine.url.database
    where = os.path.dirname(path)
    assert os.path.basename(where).startswith(db.TEMP_PREFIX) and os.path.isdir(where)
    assert db.is_ephemeral(engine) and not db.is_memory(engine)
    assert oct(os.stat(where).st_mode & 0o777) == "0o700"  # private: mkdtemp's mode
    db.migrate(engine)  # straight from the schema, no alembic: nothing to upgrade, ever
    store = Store(engine, registry().child())
    store.load()
    rt = registry().get("", "v1", "configmaps")
    a = store.create(rt, cm("a", x="1"))
    store.update(rt, {**a.obj, "data": {"x": "2"}}, a.rv)
    with engine.connect() as conn:
        assert '"2"' in conn.execute(text("SELECT data FROM objects WHERE name = 'a'")).scalar()
        # no event rows: nothing resumes a watch from this database after the process
        assert conn.execute(text("SELECT count(*) FROM events")).scalar() == 0
        tables = {r[0] for r in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'"))}
    assert "alembic_version" not in tables
    assert os.path.getsize(path) > 0  # the objects live in the file
    store.close()
    assert not os.path.exists(where)


def test_a_killed_process_leaves_its_directory_to_the_next_sweep():
    mine = db.make_engine(None)  # a live database (this process's) is never swept
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal; from mockkube.storage import db\n"
            "e = db.make_engine(None); print(e.url.database, flush=True); os.kill(os.getpid(), signal.SIGKILL)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert killed.returncode == -9
    left = os.path.dirname(killed.stdout.strip())
    assert os.path.isdir(left)  # SIGKILL: nothing ran at exit
    assert db.sweep() >= 1
    assert not os.path.exists(left)
    assert os.path.isdir(os.path.dirname(mine.url.database))
    db.release(mine)
    assert not os.path.exists(os.path.dirname(mine.url.database))


def test_sqlite_memory_url_stays_in_memory():
    engine = db.make_engine("sqlite://")
    assert db.is_memory(engine) and db.is_ephemeral(engine)
    db.release(engine)


def test_without_a_writable_temporary_directory_the_database_stays_in_memory(monkeypatch, tmp_path):
    gone = tmp_path / "missing"
    monkeypatch.setattr(db.tempfile, "tempdir", str(gone))
    monkeypatch.setattr(db, "_swept", True)
    engine = db.make_engine(None)
    assert db.is_memory(engine)
    db.release(engine)
