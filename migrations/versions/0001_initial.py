"""objects, event log and counters

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_RV = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "objects",
        sa.Column("resource", sa.String(128), primary_key=True),
        sa.Column("namespace", sa.String(253), primary_key=True),
        sa.Column("name", sa.String(253), primary_key=True),
        sa.Column("uid", sa.String(36), nullable=False),
        sa.Column("rv", _RV, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("rv", _RV, primary_key=True, autoincrement=False),
        sa.Column("resource", sa.String(128), nullable=False),
        sa.Column("namespace", sa.String(253), nullable=False),
        sa.Column("name", sa.String(253), nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("ix_events_resource_rv", "events", ["resource", "rv"])
    op.create_table(
        "counters",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", _RV, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("counters")
    op.drop_index("ix_events_resource_rv", table_name="events")
    op.drop_table("events")
    op.drop_table("objects")
