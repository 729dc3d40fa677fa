"""Each tenant's own ceilings per model, read before the deployment's table (`engine.ceilings`).

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from store import rls

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'tenant_model_ceilings',
        sa.Column('tenant_id', sa.String(length=40), sa.ForeignKey('tenants.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('model', sa.String(length=200), primary_key=True),
        sa.Column('ceiling_tokens', sa.Integer(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    rls.protect(op, 'tenant_model_ceilings')


def downgrade() -> None:
    op.drop_table('tenant_model_ceilings')
