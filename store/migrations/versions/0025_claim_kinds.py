"""Claim kinds and revisions on facts.

A fact's kind (constraint, decision, correction, dead_end, open_question, fact; `fact` for every fact written
before kinds), the fact that settled an open question and when, how a retired fact was retired (`correction`,
`revision` or `update`), and on the newer fact the earlier claim of the same voice it revises.

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None

_KINDS = "('constraint', 'decision', 'correction', 'dead_end', 'open_question', 'fact')"


def upgrade() -> None:
    op.add_column('facts', sa.Column('kind', sa.String(16), nullable=False, server_default='fact'))
    op.create_check_constraint('ck_facts_kind', 'facts', f"kind IN {_KINDS}")
    op.add_column('facts', sa.Column('settled_by', sa.String(80)))
    op.add_column('facts', sa.Column('settled_at', sa.DateTime(timezone=True)))
    op.add_column('facts', sa.Column('retired_as', sa.String(12)))
    op.add_column('facts', sa.Column('revises', sa.String(80)))
    # The facts block's constraints are read by kind on every cold decorate.
    op.create_index('ix_facts_constraints', 'facts', ['memory_pk'],
                    postgresql_where=sa.text("kind = 'constraint' AND retired_at IS NULL AND merged_into IS NULL"))


def downgrade() -> None:
    op.drop_index('ix_facts_constraints', table_name='facts')
    for column in ('revises', 'retired_as', 'settled_at', 'settled_by'):
        op.drop_column('facts', column)
    op.drop_constraint('ck_facts_kind', 'facts', type_='check')
    op.drop_column('facts', 'kind')
