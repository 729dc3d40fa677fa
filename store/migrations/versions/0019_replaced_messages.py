"""Replaced messages: a user message no reply followed, which the agent's next request replaced (an edited
message, a regenerate, a retry with new text), leaves the history for `replaced_messages`, kept for the export
and never in view or recalled; the decorate that brought it is marked superseded, and its report refused.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from store import rls

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'replaced_messages',
        sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column('memory_pk', sa.BigInteger(), sa.ForeignKey('memories.id', ondelete='CASCADE'), nullable=False),
        sa.Column('tenant_id', sa.String(length=40), nullable=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('turn', sa.Integer(), nullable=False),
        sa.Column('role', sa.String(length=40), nullable=False),
        sa.Column('body', postgresql.JSONB(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('replaced_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('replaced_by', sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_replaced_messages_memory_seq', 'replaced_messages', ['memory_pk', 'seq'])
    rls.protect(op, 'replaced_messages')
    op.add_column('decorations', sa.Column('superseded_by', sa.String(length=40), nullable=True))


def downgrade() -> None:
    op.drop_column('decorations', 'superseded_by')
    op.drop_index('ix_replaced_messages_memory_seq', table_name='replaced_messages')
    op.drop_table('replaced_messages')
