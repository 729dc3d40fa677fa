"""Each tenant's upstream for the OpenAI-compatible proxy: base URL and encrypted key.

Revision ID: 0009
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'tenant_upstreams',
        sa.Column('tenant_id', sa.String(length=40), sa.ForeignKey('tenants.id', ondelete='CASCADE'), primary_key=True),
        sa.Column('base_url', sa.String(length=2000), nullable=False),
        sa.Column('api_key_encrypted', sa.LargeBinary(), nullable=True),
        sa.Column('api_key_hint', sa.String(length=8), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table('tenant_upstreams')
