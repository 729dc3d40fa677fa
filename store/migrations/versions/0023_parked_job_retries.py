"""Parked lane jobs an operator can retry: when a retry was asked for, and when the job then succeeded.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('lane_parked_jobs', sa.Column('retried_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('lane_parked_jobs', sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('lane_parked_jobs', 'resolved_at')
    op.drop_column('lane_parked_jobs', 'retried_at')
