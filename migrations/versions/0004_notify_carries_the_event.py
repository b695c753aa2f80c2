"""PostgreSQL: the notification carries the event, so replicas need not read it back

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27

``mockkube_write`` (0002) notified the other API servers with the resourceVersion alone, and
each of them then read the event back from the ``events`` table: one query per write per
other server, on its listening thread and under its store's lock, during which its event
loop waited (the profile of ``--api-servers 2``: a fifth of the second server's samples and
a tenth of the first's). The notification now carries the event itself (``rv``, storage key,
type and the object's JSON, separated by newlines) when it fits PostgreSQL's 8,000-byte
payload, and the resourceVersion alone otherwise; a server applies a carried event only when
it is the next one after what it has applied (a notification is sent at commit, so the event
is committed) and reads the log otherwise (mockkube/storage/sharedlog.py).
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# the payload must stay below 8,000 bytes: the JSON and the key, plus the rv (at most 19
# digits), the type (at most 8 characters) and three newlines
_ROOM = 7900


def _write(notify: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION mockkube_write(p_rv bigint, p_resource text, p_namespace text, p_name text,
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
    {notify}
END
$$ LANGUAGE plpgsql
"""


CARRIED = f"""IF octet_length(p_data) + octet_length(p_resource) < {_ROOM} THEN
        PERFORM pg_notify('mockkube_events', p_rv::text || E'\\n' || p_resource || E'\\n' || p_type || E'\\n' || p_data);
    ELSE
        PERFORM pg_notify('mockkube_events', p_rv::text);
    END IF;"""
RV_ONLY = "PERFORM pg_notify('mockkube_events', p_rv::text);"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text(_write(CARRIED)))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text(_write(RV_ONLY)))
