"""An in-memory database gets its tables from schema.py, a file database from the alembic
migrations: both must give the same tables, columns and indexes."""

from __future__ import annotations

import re

from sqlalchemy import text

from mockkube.storage.db import is_memory, make_engine, migrate


def _ddl(engine) -> dict[str, str]:
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name != 'alembic_version'")
        ).all()
    return {name: re.sub(r"\s+", " ", sql).strip() for name, sql in rows}


def test_memory_schema_matches_the_migrations(tmp_path):
    memory = make_engine("sqlite://")
    assert is_memory(memory)
    migrate(memory)
    on_disk = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    assert not is_memory(on_disk)
    migrate(on_disk)
    assert _ddl(memory) == _ddl(on_disk)
    assert {"objects", "events", "counters", "ix_events_resource_rv"} <= set(_ddl(memory))
    with on_disk.connect() as conn:  # the file database is stamped, so a later upgrade starts from here
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0004"
