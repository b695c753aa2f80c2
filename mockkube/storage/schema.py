"""The SQL tables (SQLAlchemy Core). Alembic migrations in ``migrations/`` create them.

Layout for speed: objects are keyed by (resource, namespace, name) with the payload as
JSON text, so a get or list never parses more than it returns; the event log is keyed
by resourceVersion and indexed by resource, so resuming a watch reads only the tail.
"""

from sqlalchemy import BigInteger, Column, Index, Integer, MetaData, String, Table, Text

metadata = MetaData()

objects = Table(
    "objects",
    metadata,
    Column("resource", String(128), primary_key=True),  # storage key, e.g. core/pods
    Column("namespace", String(253), primary_key=True),  # "" for cluster-scoped
    Column("name", String(253), primary_key=True),
    Column("uid", String(36), nullable=False),
    Column("rv", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
    Column("data", Text, nullable=False),
)

events = Table(
    "events",
    metadata,
    Column("rv", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("resource", String(128), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("name", String(253), nullable=False),
    Column("type", String(16), nullable=False),  # ADDED, MODIFIED, DELETED
    Column("data", Text, nullable=False),
    Index("ix_events_resource_rv", "resource", "rv"),
)

# single-row counters: key "rv" holds the newest committed resourceVersion
counters = Table(
    "counters",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", BigInteger().with_variant(Integer, "sqlite"), nullable=False),
)
