"""People: users, the hidden memory holding each one's graph, and the per-source profile of what feeds it.

A conversation belongs to at most one user (`memories.user_pk`) and may name its agent; a user's graph lives in
a memory of kind `user_graph`, whose facts and passages say which conversation they came from. The idle gate's
mark (`memories.idle_through_seq`) says which of a conversation's messages its user's graph already holds.

Revision ID: 0027
Revises: 0026
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store import rls

revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'users',
        sa.Column('id', sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column('tenant_id', sa.String(40), sa.ForeignKey('tenants.id', ondelete='CASCADE'), nullable=False),
        sa.Column('user_id', sa.String(100), nullable=False),
        sa.Column('graph_memory_pk', sa.BigInteger(), sa.ForeignKey('memories.id', ondelete='SET NULL')),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint('tenant_id', 'user_id'),
    )
    rls.protect(op, 'users')
    op.create_table(
        'source_profiles',
        sa.Column('tenant_id', sa.String(40), sa.ForeignKey('tenants.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('source', sa.String(80), primary_key=True),
        sa.Column('feeds', sa.Boolean(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    rls.protect(op, 'source_profiles')
    op.add_column('memories', sa.Column('user_pk', sa.BigInteger(), sa.ForeignKey('users.id', ondelete='SET NULL')))
    op.add_column('memories', sa.Column('agent', sa.String(100)))
    op.add_column('memories', sa.Column('kind', sa.String(12), nullable=False, server_default='conversation'))
    op.add_column('memories', sa.Column('idle_through_seq', sa.BigInteger(), nullable=False, server_default='0'))
    op.create_index('ix_memories_user', 'memories', ['user_pk'], postgresql_where=sa.text('user_pk IS NOT NULL'))
    for table in ('facts', 'passages'):
        op.add_column(table, sa.Column('origin_memory_pk', sa.BigInteger(),
                                       sa.ForeignKey('memories.id', ondelete='SET NULL')))
        op.add_column(table, sa.Column('origin_memory_id', sa.String(128)))
    op.add_column('facts', sa.Column('origin_fact_key', sa.String(80)))
    op.create_index('ux_facts_origin', 'facts', ['memory_pk', 'origin_memory_id', 'origin_fact_key'], unique=True,
                    postgresql_where=sa.text('origin_fact_key IS NOT NULL'))


def downgrade() -> None:
    op.drop_index('ux_facts_origin', table_name='facts')
    op.drop_column('facts', 'origin_fact_key')
    for table in ('passages', 'facts'):
        op.drop_column(table, 'origin_memory_id')
        op.drop_column(table, 'origin_memory_pk')
    op.drop_index('ix_memories_user', table_name='memories')
    for column in ('idle_through_seq', 'kind', 'agent', 'user_pk'):
        op.drop_column('memories', column)
    op.drop_table('source_profiles')
    op.drop_table('users')
