"""PostgreSQL: a write in one round trip, its resourceVersion taken inside

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27

``mockkube_write`` (0002) needed the resourceVersion first (``SELECT nextval(...)``, a round
trip of its own, holding the API server's store lock and, on its event loop, every request)
because the object's JSON carries it. ``mockkube_commit`` takes the JSON in two parts, the
text before the resourceVersion's value and the text after it, takes the number from the
sequence itself, joins the three and writes as ``mockkube_write`` does, returning the number.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text(COMMIT))


COMMIT = """
CREATE FUNCTION mockkube_commit(p_resource text, p_namespace text, p_name text, p_type text,
                                p_head text, p_tail text, p_uid text, p_expect bigint) RETURNS bigint AS $$
DECLARE
    v_rv bigint := nextval('mockkube_rv');
BEGIN
    PERFORM mockkube_write(v_rv, p_resource, p_namespace, p_name, p_type,
                           p_head || v_rv::text || p_tail, p_uid, p_expect);
    RETURN v_rv;
END
$$ LANGUAGE plpgsql
"""


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.text("DROP FUNCTION mockkube_commit"))
