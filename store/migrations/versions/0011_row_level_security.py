"""Row-level security on every tenant table, and the role the gateway and worker act as (store/rls.py).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store import rls

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def _tenant_tables() -> list[str]:
    """Every table with a `tenant_id` column, found rather than listed, so none is forgotten."""
    rows = op.get_bind().execute(sa.text(
        "SELECT table_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY table_name"))
    return [row[0] for row in rows]


def upgrade() -> None:
    for statement in rls.role_sql() + rls.grant_sql():
        op.execute(statement)
    for table in _tenant_tables():
        rls.protect(op, table)
    rls.protect(op, "tenants", column="id")


def downgrade() -> None:
    for table in [*_tenant_tables(), "tenants"]:
        for statement in rls.unprotect_sql(table):
            op.execute(statement)
