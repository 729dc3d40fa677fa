"""Deployment-wide settings recorded in the database: first, the embedded model's precision.

int8 and float32 products give different vectors (cosine about 0.99), so one database holds one kind: the first
process records the precision it embeds in and every later one, on any machine, uses it (cli/precision.py). The
table belongs to no tenant, so it has no row-level security; the app role reads and adds rows, as it does in
every table since 0011 (granted again here in case another role migrates). A database that holds vectors
already holds int8 ones, the only precision before this table: it is recorded so.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store import rls

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

VECTOR_TABLES = ["passages", "facts", "entities"]


def upgrade() -> None:
    op.create_table(
        'deployment_settings',
        sa.Column('key', sa.String(length=100), primary_key=True),
        sa.Column('value', sa.String(length=200), nullable=False),
        sa.Column('recorded_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    op.execute(f"GRANT SELECT, INSERT ON deployment_settings TO {rls.APP_ROLE}")
    held = " OR ".join(f"EXISTS (SELECT 1 FROM {table} WHERE embedding IS NOT NULL)" for table in VECTOR_TABLES)
    op.execute(f"INSERT INTO deployment_settings (key, value) SELECT 'embedder_precision', 'int8' WHERE {held}")


def downgrade() -> None:
    op.drop_table('deployment_settings')
