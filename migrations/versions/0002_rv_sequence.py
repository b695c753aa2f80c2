"""PostgreSQL: the resourceVersion sequence API replicas share

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27

On PostgreSQL every write takes its resourceVersion from one sequence, so several mockkube
API servers can write to one database (mockkube/storage/sharedlog.py). SQLite keeps its
single writer and in-process counter: nothing changes there.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    newest = bind.execute(
        sa.text(
            "SELECT GREATEST(COALESCE((SELECT max(rv) FROM events), 0), "
            "COALESCE((SELECT max(rv) FROM objects), 0), "
            "COALESCE((SELECT value FROM counters WHERE key = 'rv'), 0))"
        )
    ).scalar()
    op.execute(sa.text(f"CREATE SEQUENCE mockkube_rv START WITH {int(newest or 0) + 1}"))


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute(sa.text("DROP SEQUENCE mockkube_rv"))
