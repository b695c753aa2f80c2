"""Engine creation and schema migration.

The server brings the schema up to date at start through alembic, so a database file
written by an older mockkube keeps working after an upgrade. An ephemeral database (the
default: a file in a private temporary directory, or ``sqlite://`` in memory) has no past to
upgrade: it gets the tables straight from mockkube/storage/schema.py.

The default embedded database is a SQLite file in a directory of its own under the
temporary directory, removed when the store closes (or at the process's exit): its pages
stay in the operating system's page cache, as etcd's data stay in etcd's files, rather than
in the server's heap, where ``sqlite://`` held a second copy of every object (~12 KB of a
running pod's share, with its Events). Nothing reads it after the process, so it is written
without syncs; a process killed with SIGKILL leaves its directory behind, and the next
ephemeral database made on the machine removes it (the owner holds a lock on a file in it
for its life, which the kernel drops when it dies).
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import StaticPool

LOCK_TIMEOUT = 0.05  # seconds a SQLite write waits for another process's lock
DEFAULT_URL = None  # embedded: an ephemeral SQLite file (``sqlite://`` keeps it in memory instead)
MEMORY_URLS = ("sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://", "sqlite+pysqlite:///:memory:")
TEMP_PREFIX = "mockkube-db-"
_CACHE_KB = 2048  # SQLite's own page cache of an ephemeral file (its default): the rest is the OS's


def migrations_dir() -> Path:
    here = Path(__file__).resolve()
    for cand in (here.parents[2] / "migrations", here.parents[1] / "_migrations"):
        if (cand / "env.py").exists():
            return cand
    raise FileNotFoundError("alembic migrations directory not found")


class _Ephemeral:
    """A private directory holding one ephemeral database, locked while this process lives."""

    def __init__(self) -> None:
        _sweep_once()
        self.dir = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")
        self.pid = os.getpid()
        # locked before it takes the name a sweeper looks for, so none ever finds it unlocked
        making = os.path.join(self.dir, "lock.new")
        self.lock_fd = os.open(making, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        os.rename(making, os.path.join(self.dir, "lock"))
        self.path = os.path.join(self.dir, "objects.db")

    def remove(self) -> None:
        if os.getpid() != self.pid:  # a forked child: the directory is its parent's
            return
        shutil.rmtree(self.dir, ignore_errors=True)
        try:
            os.close(self.lock_fd)
        except OSError:
            pass


_ephemeral: dict[str, _Ephemeral] = {}  # database path -> its directory
_ephemeral_lock = threading.Lock()
_swept = False


def _sweep_once() -> None:
    global _swept
    if not _swept:
        _swept = True
        atexit.register(_remove_all)
        # beside the start, not in it: listing the temporary directory (thousands of entries
        # on a busy machine) and trying each lock are system calls, ~1.7 ms of a start
        threading.Thread(target=sweep, name="mockkube-sweep", daemon=True).start()


def sweep() -> int:
    """Remove the directories of ephemeral databases whose process died without removing
    them (SIGKILL): their lock file is no longer locked. How many were removed. The first
    ephemeral database a process makes starts it in a thread."""
    root = tempfile.gettempdir()
    removed = 0
    try:
        names = [n for n in os.listdir(root) if n.startswith(TEMP_PREFIX)]
    except OSError:
        return 0
    for name in names:
        d = os.path.join(root, name)
        try:
            fd = os.open(os.path.join(d, "lock"), os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # not ours, or being made right now (its lock file is named once locked)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # its process lives
        finally:
            os.close(fd)
        shutil.rmtree(d, ignore_errors=True)
        removed += 1
    return removed


def _remove_all() -> None:
    with _ephemeral_lock:
        held = list(_ephemeral.values())
        _ephemeral.clear()
    for e in held:
        e.remove()


def make_engine(url: str | None) -> Engine:
    """An engine for ``url`` (None: the default ephemeral database); SQLite gets WAL and relaxed
    fsync, memory gets one shared connection."""
    if url is None:
        return _ephemeral_engine()
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://") :]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    if url.startswith("sqlite"):
        memory = url in MEMORY_URLS
        # a write waits 50 ms at most for a lock another process holds (sqlite3's default is
        # 5 s): the write runs on the API's event loop, so every request would wait with it;
        # it is answered 500 ServerTimeout with a Retry-After instead (storage.storage_error)
        kwargs: dict = {"connect_args": {"check_same_thread": False, "timeout": LOCK_TIMEOUT}}
        if memory:
            kwargs["poolclass"] = StaticPool
        engine = create_engine(url, **kwargs)

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record) -> None:  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            if not memory:
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def _ephemeral_engine() -> Engine:
    """The default database: a SQLite file in a private temporary directory, one connection
    (as the in-memory database has) holding it in exclusive mode, its rollback journal in
    memory (a transaction's old pages, until it ends) and written without syncs: nothing reads
    it after this process, so a crash may leave it torn. A write costs 1-3 us more than in
    memory (5,000 creates, updates, deletes through the Store); a write-ahead log cost 3-9 us,
    a journal file 15-30 us."""
    try:
        tmp = _Ephemeral()
    except OSError as e:  # no writable temporary directory: the database stays in memory
        logging.getLogger("mockkube.store").warning(
            "no temporary directory for the database (%s): keeping it in memory", e.strerror or e
        )
        return make_engine(MEMORY_URLS[0])
    with _ephemeral_lock:
        _ephemeral[tmp.path] = tmp
    engine = create_engine(
        f"sqlite:///{tmp.path}",
        poolclass=StaticPool,
        connect_args={"check_same_thread": False, "timeout": LOCK_TIMEOUT},
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # pragma: no cover - trivial
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA locking_mode=EXCLUSIVE")
        cur.execute("PRAGMA journal_mode=MEMORY")
        cur.execute("PRAGMA synchronous=OFF")
        cur.execute(f"PRAGMA cache_size=-{_CACHE_KB}")
        cur.execute("PRAGMA mmap_size=0")
        cur.close()

    return engine


def is_memory(engine: Engine) -> bool:
    """An SQLite database that lives only in this process's memory."""
    return engine.url.get_backend_name() == "sqlite" and engine.url.database in (None, "", ":memory:")


def is_ephemeral(engine: Engine) -> bool:
    """A database that ends with this process: in memory, or the default's temporary file.
    Nothing reads it after a restart (no schema to upgrade, no event rows to resume from)."""
    return is_memory(engine) or (engine.url.database or "") in _ephemeral


def release(engine: Engine) -> None:
    """Close ``engine``'s connections and remove an ephemeral database's directory."""
    engine.dispose()
    with _ephemeral_lock:
        tmp = _ephemeral.pop(engine.url.database or "", None)
    if tmp is not None:
        tmp.remove()


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest alembic revision.

    An ephemeral database starts empty and ends with the process, so there is nothing to
    upgrade, ever: it gets the tables the migrations build (tests/unit/test_db_schema.py
    checks they match) without loading alembic, which is 0.4 s of every test cluster's
    start-up."""
    if is_ephemeral(engine):
        from mockkube.storage.schema import metadata

        metadata.create_all(engine)
        return
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            # API replicas starting together: one migrates, the others wait and find it done
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7311)")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
