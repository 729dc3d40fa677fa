"""A passage may wait for its vector: an imported memory's passages are written with their text and word
index, and the memory's lane embeds them (`store.repositories.vectors`).

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

from alembic import op

revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column('passages', 'embedding', nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM passages WHERE embedding IS NULL")
    op.alter_column('passages', 'embedding', nullable=False)
