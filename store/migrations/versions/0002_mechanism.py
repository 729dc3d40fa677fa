"""Episodes and their history, facts, traces, boundary scores, note calls, idempotency records.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 12:35:05.451082
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('idempotency_records',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('memory_id', sa.String(length=128), nullable=False),
    sa.Column('endpoint', sa.String(length=20), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('body_hash', sa.String(length=64), nullable=False),
    sa.Column('status_code', sa.Integer(), nullable=False),
    sa.Column('response', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('tenant_id', 'memory_id', 'endpoint', 'key')
    )
    op.create_table('boundary_scores',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('unit_first_seq', sa.BigInteger(), nullable=False),
    sa.Column('unit_last_seq', sa.BigInteger(), nullable=False),
    sa.Column('first_score', sa.Float(), nullable=False),
    sa.Column('last_score', sa.Float(), nullable=False),
    sa.Column('judge', sa.String(length=80), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_pk', 'unit_first_seq')
    )
    op.create_table('episode_transitions',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('episode_key', sa.String(length=80), nullable=False),
    sa.Column('before', sa.String(length=20), nullable=True),
    sa.Column('after', sa.String(length=20), nullable=False),
    sa.Column('reason', sa.String(length=40), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_episode_transitions_memory', 'episode_transitions', ['memory_pk', 'id'], unique=False)
    op.create_table('episodes',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('episode_key', sa.String(length=80), nullable=False),
    sa.Column('state', sa.String(length=20), nullable=False),
    sa.Column('first_seq', sa.BigInteger(), nullable=False),
    sa.Column('last_seq', sa.BigInteger(), nullable=False),
    sa.Column('first_turn', sa.Integer(), nullable=False),
    sa.Column('last_turn', sa.Integer(), nullable=False),
    sa.Column('tokens', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('facts_written', sa.Boolean(), nullable=False),
    sa.Column('sealed_without_facts', sa.Boolean(), nullable=False),
    sa.Column('asked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('asks', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_pk', 'episode_key')
    )
    op.create_table('note_calls',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('decorate_id', sa.String(length=40), nullable=False),
    sa.Column('call_id', sa.String(length=200), nullable=False),
    sa.Column('arguments', sa.Text(), nullable=False),
    sa.Column('taken', sa.Boolean(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('episode_keys', postgresql.ARRAY(sa.String(length=80)), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('traces',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('episode_key', sa.String(length=80), nullable=True),
    sa.Column('fact_key', sa.String(length=80), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('counted', sa.Boolean(), nullable=False),
    sa.Column('encoding', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ux_traces_encoding', 'traces', ['memory_pk', 'episode_key'], unique=True, postgresql_where=sa.text('encoding'))
    op.create_index('ux_traces_fact_episode', 'traces', ['memory_pk', 'fact_key', 'episode_key'], unique=True, postgresql_where=sa.text('NOT encoding'))
    op.create_table('facts',
    sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
    sa.Column('memory_pk', sa.BigInteger(), nullable=False),
    sa.Column('tenant_id', sa.String(length=40), nullable=False),
    sa.Column('fact_key', sa.String(length=80), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('subject', sa.Text(), nullable=False),
    sa.Column('object', sa.Text(), nullable=False),
    sa.Column('milestone', sa.Boolean(), nullable=False),
    sa.Column('episode_keys', postgresql.ARRAY(sa.String(length=80)), nullable=False),
    sa.Column('first_turn', sa.Integer(), nullable=False),
    sa.Column('last_turn', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('note_call_id', sa.BigInteger(), nullable=True),
    sa.Column('valid_from', sa.DateTime(timezone=True), nullable=False),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['memory_pk'], ['memories.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['note_call_id'], ['note_calls.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('memory_pk', 'fact_key')
    )
    op.add_column('decorations', sa.Column('estimated_tokens', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('decorations', sa.Column('note_ask_first_turn', sa.Integer(), nullable=True))
    op.add_column('decorations', sa.Column('note_ask_last_turn', sa.Integer(), nullable=True))
    op.add_column('memories', sa.Column('size_ratios', postgresql.JSONB(astext_type=sa.Text()), nullable=False,
                                       server_default=sa.text("'{}'::jsonb")))
    op.add_column('messages', sa.Column('tokens', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('messages', sa.Column('agent_hash', sa.String(length=64), nullable=True))
    op.add_column('messages', sa.Column('agent_optional', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.drop_column('messages', 'agent_optional')
    op.drop_column('messages', 'agent_hash')
    op.drop_column('messages', 'tokens')
    op.drop_column('memories', 'size_ratios')
    op.drop_column('decorations', 'note_ask_last_turn')
    op.drop_column('decorations', 'note_ask_first_turn')
    op.drop_column('decorations', 'estimated_tokens')
    op.drop_table('facts')
    op.drop_index('ux_traces_fact_episode', table_name='traces', postgresql_where=sa.text('NOT encoding'))
    op.drop_index('ux_traces_encoding', table_name='traces', postgresql_where=sa.text('encoding'))
    op.drop_table('traces')
    op.drop_table('note_calls')
    op.drop_table('episodes')
    op.drop_index('ix_episode_transitions_memory', table_name='episode_transitions')
    op.drop_table('episode_transitions')
    op.drop_table('boundary_scores')
    op.drop_table('idempotency_records')
