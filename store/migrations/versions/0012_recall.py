"""Recall: each turn's recall block (as first placed and as distilled) and the walk prepared for the next
user message; both behind row-level security like every tenant table.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from store import rls

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

_TABLES = ("recall_blocks", "recall_walks")


def _memory_columns() -> list[sa.Column]:
    return [
        sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column('memory_pk', sa.BigInteger(), sa.ForeignKey('memories.id', ondelete='CASCADE'), nullable=False),
        sa.Column('tenant_id', sa.String(length=40), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        'recall_blocks', *_memory_columns(),
        sa.Column('turn', sa.Integer(), nullable=False),
        sa.Column('before_seq', sa.BigInteger(), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('fact_ids', postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.Column('passage_ids', postgresql.ARRAY(sa.BigInteger()), nullable=False),
        sa.Column('items', postgresql.JSONB(), nullable=False),
        sa.Column('provenance', sa.String(length=20), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('distilled_text', sa.Text(), nullable=True),
        sa.Column('distilled_fact_ids', postgresql.ARRAY(sa.BigInteger()), nullable=True),
        sa.Column('distilled_passage_ids', postgresql.ARRAY(sa.BigInteger()), nullable=True),
        sa.Column('removed', sa.Boolean(), nullable=False),
        sa.Column('distilled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('memory_pk', 'turn'),
    )
    op.create_table(
        'recall_walks', *_memory_columns(),
        sa.Column('for_turn', sa.Integer(), nullable=False),
        sa.Column('after_seq', sa.BigInteger(), nullable=False),
        sa.Column('levels', postgresql.JSONB(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('memory_pk', 'for_turn'),
    )
    for table in _TABLES:
        rls.protect(op, table)


def downgrade() -> None:
    for table in _TABLES:
        op.drop_table(table)
