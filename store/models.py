"""Table rows. API shapes live in `api/schemas.py`; a row never leaves the store as-is."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "ApiKey",
    "Base",
    "Decoration",
    "Memory",
    "Message",
    "ModelUsage",
    "OutboxEvent",
    "Tenant",
]


class Base(DeclarativeBase):
    pass


def _now_column() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


class Tenant(Base):
    __tablename__ = "tenants"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    created_at: Mapped[datetime] = _now_column()


class ApiKey(Base):
    """A tenant's bearer key, kept only as its SHA-256 (keys are long random strings, so no salt is needed)."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    created_at: Mapped[datetime] = _now_column()
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Memory(Base):
    """One conversation. `memory_id` is the client's name for it, unique within its tenant only."""

    __tablename__ = "memories"
    __table_args__ = (UniqueConstraint("tenant_id", "memory_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False)
    memory_id: Mapped[str] = mapped_column(String(128), nullable=False)
    created_at: Mapped[datetime] = _now_column()
    # Counters advanced under the memory's row lock: the hot path's per-memory serialisation point.
    last_event_seq: Mapped[int] = mapped_column(BigInteger, default=0, nullable=False)
    last_message_seq: Mapped[int] = mapped_column(BigInteger, default=0, nullable=False)
    last_turn: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    last_user_message_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The latest time this memory has seen; X-Lethe-Now may never move it backwards.
    clock: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Message(Base):
    """A message exactly as it was sent, numbered, with the user turn it belongs to."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("memory_pk", "seq"),
        Index("ix_messages_memory_hash", "memory_pk", "content_hash"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    turn: Mapped[int] = mapped_column(Integer, nullable=False)
    role: Mapped[str] = mapped_column(String(40), nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    body: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class Decoration(Base):
    """One decorate call, so a report can name what it answers."""

    __tablename__ = "decorations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    shape: Mapped[str] = mapped_column(String(20), nullable=False)
    model: Mapped[str | None] = mapped_column(String(200))
    turn: Mapped[int] = mapped_column(Integer, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    reported_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class OutboxEvent(Base):
    """An event for the memory's workflow, written in the same transaction as the change it announces.

    The relay signals the workflow after commit (`delivered_at`); the lane marks it done (`processed_at`).
    """

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("memory_pk", "seq"),
        Index("ix_outbox_undelivered", "delivered_at", "memory_pk", "seq"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    kind: Mapped[str] = mapped_column(String(40), nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    created_at: Mapped[datetime] = _now_column()
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ModelUsage(Base):
    """Tokens spent on one model call, for cost accounting per tenant and memory."""

    __tablename__ = "model_usage"
    __table_args__ = (Index("ix_model_usage_tenant_memory", "tenant_id", "memory_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    memory_id: Mapped[str | None] = mapped_column(String(128))
    provider: Mapped[str] = mapped_column(String(40), nullable=False)
    model: Mapped[str] = mapped_column(String(200), nullable=False)
    purpose: Mapped[str] = mapped_column(String(40), nullable=False)
    prompt_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = _now_column()
