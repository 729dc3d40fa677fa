"""Salience of episodes (act and intensity).

Each episode gets its act, the intensity of the user's tone in it and its salience (null until the lane judges
it; its encoding trace then counts 1, as before), and each memory a baseline of its user's usual tone.

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from store import rls

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('episodes', sa.Column('act', sa.String(20)))
    op.add_column('episodes', sa.Column('intensity', sa.Float()))
    op.add_column('episodes', sa.Column('salience', sa.Float()))
    # The lane looks for unjudged episodes after every decorate and report: a long memory has thousands judged.
    op.create_index('ix_episodes_unjudged', 'episodes', ['memory_pk', 'first_seq'],
                    postgresql_where=sa.text("act IS NULL AND state <> 'forgotten'"))
    op.create_table(
        'tone_baselines',
        sa.Column('memory_pk', sa.BigInteger(), sa.ForeignKey('memories.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('tenant_id', sa.String(40), nullable=False),
        sa.Column('messages', sa.Integer(), nullable=False),
        sa.Column('through_seq', sa.BigInteger(), nullable=False),
        sa.Column('stats', postgresql.JSONB(), nullable=False),
    )
    rls.protect(op, 'tone_baselines')


def downgrade() -> None:
    op.drop_table('tone_baselines')
    op.drop_index('ix_episodes_unjudged', table_name='episodes')
    op.drop_column('episodes', 'salience')
    op.drop_column('episodes', 'intensity')
    op.drop_column('episodes', 'act')
