"""Tenants, API keys, memories, messages, decorations, the outbox and model usage.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _now() -> sa.Column:
    return sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    # Later work stores vectors (pgvector) and searches words by trigram (pg_trgm).
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")

    op.create_table(
        "tenants",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        _now(),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("tenant_id", sa.String(40), sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(20), nullable=False),
        _now(),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "memories",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("tenant_id", sa.String(40), sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("memory_id", sa.String(128), nullable=False),
        _now(),
        sa.Column("last_event_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_message_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_turn", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_user_message_at", sa.DateTime(timezone=True)),
        sa.Column("clock", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("tenant_id", "memory_id"),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("memory_pk", sa.BigInteger, sa.ForeignKey("memories.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tenant_id", sa.String(40), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("role", sa.String(40), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("body", JSONB, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("memory_pk", "seq"),
    )
    op.create_index("ix_messages_memory_hash", "messages", ["memory_pk", "content_hash"])
    op.create_table(
        "decorations",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("memory_pk", sa.BigInteger, sa.ForeignKey("memories.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tenant_id", sa.String(40), nullable=False),
        sa.Column("shape", sa.String(20), nullable=False),
        sa.Column("model", sa.String(200)),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reported_at", sa.DateTime(timezone=True)),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("memory_pk", sa.BigInteger, sa.ForeignKey("memories.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tenant_id", sa.String(40), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("payload", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        _now(),
        sa.Column("delivered_at", sa.DateTime(timezone=True)),
        sa.Column("processed_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("memory_pk", "seq"),
    )
    op.create_index("ix_outbox_undelivered", "outbox", ["delivered_at", "memory_pk", "seq"])
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
        _now(),
    )
    op.create_index("ix_model_usage_tenant_memory", "model_usage", ["tenant_id", "memory_id"])


def downgrade() -> None:
    for table in ("model_usage", "outbox", "decorations", "messages", "memories", "api_keys", "tenants"):
        op.drop_table(table)
