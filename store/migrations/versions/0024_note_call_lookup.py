"""Note calls found by memory and call id: report and decorate both ask whether a note call was taken already.

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

from alembic import op

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_note_calls_memory_call', 'note_calls', ['memory_pk', 'call_id'])


def downgrade() -> None:
    op.drop_index('ix_note_calls_memory_call', table_name='note_calls')
