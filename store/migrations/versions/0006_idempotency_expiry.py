"""Idempotency answers expire: an index on their age for the gateway's sweep.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_idempotency_records_created_at', 'idempotency_records', ['created_at'])


def downgrade() -> None:
    op.drop_index('ix_idempotency_records_created_at', table_name='idempotency_records')
