"""The knowledge graph: entities and their aliases, facts as edges (source, merges, retirement, conflicts),
passages of sealed episodes, and the word, trigram and meaning indexes on facts and passages.

Existing facts get `integrated_at` NULL, so the lane brings them into the graph (backfill) on its next event.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

_HNSW = {"postgresql_using": "hnsw", "postgresql_ops": {"embedding": "vector_cosine_ops"}}


def _memory_columns() -> list[sa.Column]:
    return [
        sa.Column('id', sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column('memory_pk', sa.BigInteger(), sa.ForeignKey('memories.id', ondelete='CASCADE'), nullable=False),
        sa.Column('tenant_id', sa.String(length=40), nullable=False),
    ]


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.create_table(
        'entities', *_memory_columns(),
        sa.Column('name', sa.Text(), nullable=False),
        sa.Column('kind', sa.String(length=40), nullable=True),
        sa.Column('embedding', Vector(384), nullable=True),
        sa.Column('origin', sa.String(length=80), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_entities_memory', 'entities', ['memory_pk', 'id'])
    op.create_index('ix_entities_name_trgm', 'entities', ['name'], postgresql_using='gin',
                    postgresql_ops={'name': 'gin_trgm_ops'})
    op.create_index('ix_entities_embedding', 'entities', ['embedding'], **_HNSW)
    op.create_table(
        'entity_aliases', *_memory_columns(),
        sa.Column('entity_id', sa.BigInteger(), sa.ForeignKey('entities.id', ondelete='CASCADE'), nullable=False),
        sa.Column('name', sa.Text(), nullable=False),
        sa.Column('key', sa.Text(), nullable=False),
        sa.Column('fact_key', sa.String(length=80), nullable=False),
        sa.Column('score', sa.Float(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('memory_pk', 'key'),
    )
    op.create_index('ix_entity_aliases_entity', 'entity_aliases', ['entity_id'])
    op.create_index('ix_entity_aliases_trgm', 'entity_aliases', ['name'], postgresql_using='gin',
                    postgresql_ops={'name': 'gin_trgm_ops'})

    op.alter_column('facts', 'valid_to', new_column_name='retired_at')
    op.add_column('facts', sa.Column('source', sa.String(length=12), server_default='unknown', nullable=False))
    op.add_column('facts', sa.Column('retired_by', sa.String(length=80), nullable=True))
    for column in ('subject_entity_id', 'object_entity_id'):
        op.add_column('facts', sa.Column(column, sa.BigInteger(),
                                         sa.ForeignKey('entities.id', ondelete='SET NULL'), nullable=True))
    op.add_column('facts', sa.Column('merged_into', sa.String(length=80), nullable=True))
    op.add_column('facts', sa.Column('merged_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('facts', sa.Column('conflict_with', sa.String(length=80), nullable=True))
    op.add_column('facts', sa.Column('integrated_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('facts', sa.Column('words', postgresql.TSVECTOR(), nullable=True))
    op.add_column('facts', sa.Column('embedding', Vector(384), nullable=True))
    op.create_index('ix_facts_unintegrated', 'facts', ['memory_pk', 'id'],
                    postgresql_where=sa.text('integrated_at IS NULL'))
    # A new fact is judged against the current facts that share one of its entities.
    op.create_index('ix_facts_subject_entity', 'facts', ['memory_pk', 'subject_entity_id'])
    op.create_index('ix_facts_object_entity', 'facts', ['memory_pk', 'object_entity_id'])
    op.create_index('ix_facts_words', 'facts', ['words'], postgresql_using='gin')
    op.create_index('ix_facts_note_trgm', 'facts', ['note'], postgresql_using='gin',
                    postgresql_ops={'note': 'gin_trgm_ops'})
    op.create_index('ix_facts_embedding', 'facts', ['embedding'], **_HNSW)

    op.create_table(
        'passages', *_memory_columns(),
        sa.Column('episode_key', sa.String(length=80), nullable=False),
        sa.Column('ordinal', sa.Integer(), nullable=False),
        sa.Column('first_seq', sa.BigInteger(), nullable=False),
        sa.Column('last_seq', sa.BigInteger(), nullable=False),
        sa.Column('first_turn', sa.Integer(), nullable=False),
        sa.Column('last_turn', sa.Integer(), nullable=False),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('words', postgresql.TSVECTOR(), nullable=False),
        sa.Column('embedding', Vector(384), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ux_passages_episode', 'passages', ['memory_pk', 'episode_key', 'ordinal'], unique=True)
    op.create_index('ix_passages_words', 'passages', ['words'], postgresql_using='gin')
    op.create_index('ix_passages_trgm', 'passages', ['text'], postgresql_using='gin',
                    postgresql_ops={'text': 'gin_trgm_ops'})
    op.create_index('ix_passages_embedding', 'passages', ['embedding'], **_HNSW)


def downgrade() -> None:
    op.drop_table('passages')
    for index in ('ix_facts_embedding', 'ix_facts_note_trgm', 'ix_facts_words', 'ix_facts_object_entity',
                  'ix_facts_subject_entity', 'ix_facts_unintegrated'):
        op.drop_index(index, table_name='facts')
    for column in ('embedding', 'words', 'integrated_at', 'conflict_with', 'merged_at', 'merged_into',
                   'object_entity_id', 'subject_entity_id', 'retired_by', 'source'):
        op.drop_column('facts', column)
    op.alter_column('facts', 'retired_at', new_column_name='valid_to')
    op.drop_table('entity_aliases')
    op.drop_table('entities')
