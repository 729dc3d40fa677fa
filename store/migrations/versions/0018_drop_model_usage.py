"""Drop `model_usage`: no process ever wrote it (no usage sink was passed to a provider), so it held nothing and
promised an accounting that did not exist. Usage of OpenAI-compatible calls is reported to a provider's sink
where one is given (providers/usage.py).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_model_usage_tenant_memory", table_name="model_usage")
    op.drop_table("model_usage")


def downgrade() -> None:
    op.create_table(
        "model_usage",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("tenant_id", sa.String(40), nullable=False),
        sa.Column("memory_id", sa.String(128)),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("purpose", sa.String(40), nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    op.create_index("ix_model_usage_tenant_memory", "model_usage", ["tenant_id", "memory_id"])
