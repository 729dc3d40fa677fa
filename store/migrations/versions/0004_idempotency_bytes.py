"""Idempotency answers stored as the compressed bytes sent, not as JSONB.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('idempotency_records', sa.Column('response_zlib', sa.LargeBinary(), nullable=True))
    op.alter_column('idempotency_records', 'response', nullable=True)
    # Already compressed: Postgres compressing it again would only cost time.
    op.execute("ALTER TABLE idempotency_records ALTER COLUMN response_zlib SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("DELETE FROM idempotency_records WHERE response IS NULL")
    op.alter_column('idempotency_records', 'response', nullable=False)
    op.drop_column('idempotency_records', 'response_zlib')
