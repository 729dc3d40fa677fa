"""Message edits: a user message that says an earlier one otherwise, the conversation branching from there,
names the message it edits (`edit_of`, its seq). The messages it branched away from stay in the history,
marked as ones the agent no longer holds, so the new branch's requests line up with what is stored.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('messages', sa.Column('edit_of', sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column('messages', 'edit_of')
