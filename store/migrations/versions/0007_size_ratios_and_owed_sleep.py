"""Size ratios per tenant and model; a sleep owed while a fade was in progress; each decorate's fixed part.

A new conversation on a model the tenant already uses starts with the ratio its other memories learned.
A sleep that comes while episodes are leaving waits for that fade to end (`memories.sleep_owed`).
The lane plans its cuts by the same budget as the hot path, so it reads the fixed part of the memory's
last decorate (`decorations.fixed_tokens`). `memories.clock` held a time, not a clock: it is `latest_at`.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'size_ratios',
        sa.Column('tenant_id', sa.String(length=40), sa.ForeignKey('tenants.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('model', sa.String(length=200), nullable=False),
        sa.Column('ratio', sa.Float(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('tenant_id', 'model'),
    )
    op.add_column('memories', sa.Column('sleep_owed', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.add_column('decorations', sa.Column('fixed_tokens', sa.Integer(), server_default='0', nullable=False))
    op.alter_column('memories', 'clock', new_column_name='latest_at')
    # The lane reads a memory's last decorate before each cut: without this, a scan of every memory's.
    op.create_index('ix_decorations_memory_at', 'decorations', ['memory_pk', 'at'])


def downgrade() -> None:
    op.drop_index('ix_decorations_memory_at', table_name='decorations')
    op.alter_column('memories', 'latest_at', new_column_name='clock')
    op.drop_column('decorations', 'fixed_tokens')
    op.drop_column('memories', 'sleep_owed')
    op.drop_table('size_ratios')
