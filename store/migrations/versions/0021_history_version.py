"""A memory's history version: moved whenever stored history is rewritten in place (a replaced user message
gives its seq to the one replacing it; an edit marks the branch it left), so a gateway that cached the history
reads it again whole instead of extending a copy that is no longer true.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('memories', sa.Column('history_version', sa.BigInteger(), server_default='0', nullable=False))


def downgrade() -> None:
    op.drop_column('memories', 'history_version')
