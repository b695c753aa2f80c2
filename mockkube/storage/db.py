"""Engine creation and schema migration.

The server brings the schema up to date at start through alembic, so a database file
written by an older mockkube keeps working after an upgrade. An in-memory database has no
past to upgrade: it gets the tables straight from mockkube/storage/schema.py.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import StaticPool

LOCK_TIMEOUT = 0.05  # seconds a SQLite write waits for another process's lock
DEFAULT_URL = "sqlite://"  # embedded, in memory: the fastest default for a test cluster


def migrations_dir() -> Path:
    here = Path(__file__).resolve()
    for cand in (here.parents[2] / "migrations", here.parents[1] / "_migrations"):
        if (cand / "env.py").exists():
            return cand
    raise FileNotFoundError("alembic migrations directory not found")


def make_engine(url: str | None) -> Engine:
    """An engine for ``url``; SQLite gets WAL and relaxed fsync, memory gets one shared connection."""
    url = url or DEFAULT_URL
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://") :]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    if url.startswith("sqlite"):
        memory = url in ("sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://", "sqlite+pysqlite:///:memory:")
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


def is_memory(engine: Engine) -> bool:
    """An SQLite database that lives only in this process's memory."""
    return engine.url.get_backend_name() == "sqlite" and engine.url.database in (None, "", ":memory:")


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest alembic revision.

    An in-memory database starts empty and ends with the process, so there is nothing to
    upgrade, ever: it gets the tables the migrations build (tests/unit/test_db_schema.py
    checks they match) without loading alembic, which is 0.4 s of every test cluster's
    start-up."""
    if is_memory(engine):
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
