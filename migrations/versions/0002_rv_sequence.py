"""PostgreSQL: the resourceVersion sequence API replicas share, and their write function

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27

On PostgreSQL every write takes its resourceVersion from one sequence, so several mockkube
API servers can write to one database (mockkube/storage/sharedlog.py). SQLite keeps its
single writer and in-process counter: nothing changes there. ``mockkube_write`` makes one
write (event row first, then the object row checked against the resourceVersion the writer
read, then the notification) one round trip to the server.
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
    op.execute(sa.text(WRITE))


WRITE = """
CREATE FUNCTION mockkube_write(p_rv bigint, p_resource text, p_namespace text, p_name text,
                               p_type text, p_data text, p_uid text, p_expect bigint) RETURNS void AS $$
BEGIN
    INSERT INTO events (rv, resource, namespace, name, type, data)
        VALUES (p_rv, p_resource, p_namespace, p_name, p_type, p_data);
    IF p_type = 'ADDED' THEN
        INSERT INTO objects (resource, namespace, name, uid, rv, data)
            VALUES (p_resource, p_namespace, p_name, p_uid, p_rv, p_data);
    ELSIF p_type = 'MODIFIED' THEN
        UPDATE objects SET rv = p_rv, data = p_data, uid = p_uid
            WHERE resource = p_resource AND namespace = p_namespace AND name = p_name AND rv = p_expect;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'stored object changed' USING ERRCODE = 'MK409';
        END IF;
    ELSE
        DELETE FROM objects
            WHERE resource = p_resource AND namespace = p_namespace AND name = p_name AND rv = p_expect;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'stored object changed' USING ERRCODE = 'MK409';
        END IF;
    END IF;
    PERFORM pg_notify('mockkube_events', p_rv::text);
END
$$ LANGUAGE plpgsql
"""


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        op.execute(sa.text("DROP FUNCTION mockkube_write"))
        op.execute(sa.text("DROP SEQUENCE mockkube_rv"))
