"""The lane's records: parked jobs and prepared sleeps.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('lane_parked_jobs',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('job', sa.String(length=60), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_pk', 'seq', 'job')
    )
    op.create_table('sleep_preparations',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('for_user_message_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('episodes_cut', sa.Integer(), nullable=False),
    sa.Column('units_scored', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_pk', 'for_user_message_at')
    )
    # The lane counts a memory's unprocessed events after every job.
    op.create_index('ix_outbox_unprocessed', 'outbox', ['memory_pk', 'seq'], unique=False,
                    postgresql_where=sa.text('processed_at IS NULL'))


def downgrade() -> None:
    op.drop_index('ix_outbox_unprocessed', table_name='outbox', postgresql_where=sa.text('processed_at IS NULL'))
    op.drop_table('sleep_preparations')
    op.drop_table('lane_parked_jobs')
