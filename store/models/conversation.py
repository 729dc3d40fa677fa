"""A memory, its messages as sent, its decorate calls and the outbox of its workflow events."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Identity, Index, Integer, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column
from store.nul import NulSafeString


class MemoryRow(Base):
    """One conversation. `memory_id` is the client's name for it, unique within its tenant only."""

    __tablename__ = "memories"
    __table_args__ = (UniqueConstraint("tenant_id", "memory_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False)
    memory_id: Mapped[str] = mapped_column(String(128), nullable=False)
    created_at: Mapped[datetime] = now_column()
    # Counters advanced under the memory's row lock: the hot path's per-memory serialisation point.
    last_event_seq: Mapped[int] = mapped_column(BigInteger, default=0, nullable=False)
    last_message_seq: Mapped[int] = mapped_column(BigInteger, default=0, nullable=False)
    last_turn: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    last_user_message_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The latest time this memory has seen; X-Lethe-Now may never move it backwards.
    latest_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Moves whenever the memory's episodes, facts or traces change (database triggers, migration 0005, so no
    # writer can forget it): the gateway reuses what it last loaded of them while this has not moved.
    mechanism_version: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0", nullable=False)
    # Provider-count / our-estimate per model, learned from report's usage: this memory's own, refining the
    # tenant's (`SizeRatio`).
    size_ratios: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    # A sleep came while a fade was in progress: it happens when that fade ends.
    sleep_owed: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default="false")
    # Moves when stored history is rewritten in place (a replaced message, an edit's branch; migration 0021):
    # a history cached at another number is read again whole.
    history_version: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0", nullable=False)
    # People (migration 0027): the user this conversation belongs to, fixed at its first call naming one; the
    # agent that runs it, when the agent says; `user_graph` for the hidden memory holding a user's graph.
    user_pk: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    agent: Mapped[str | None] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(12), nullable=False, default="conversation",
                                      server_default="conversation")
    # The idle gate: messages up to this seq are already searchable from the user's other conversations.
    idle_through_seq: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0", nullable=False)


class MessageRow(Base):
    """One stored item of a memory's history: the JSON body verbatim, its `seq` within the memory and its turn."""

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
    role: Mapped[str] = mapped_column(NulSafeString(40), nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    body: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # Our token estimate of the body, counted once when stored.
    tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # Hash of the message as the agent holds it (a reply without its note call), for recognising resends;
    # None for messages only Lethe has (the tool result answering a note call).
    agent_hash: Mapped[str | None] = mapped_column(String(64))
    # The agent may or may not have kept it (a reply that was only a note call reaches it empty).
    agent_optional: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # The seq of the earlier user message this one edits (migration 0020); None for any other message.
    edit_of: Mapped[int | None] = mapped_column(BigInteger)


class DecorationRow(Base):
    """One decorate call, so a report can name what it answers."""

    __tablename__ = "decorations"
    __table_args__ = (Index("ix_decorations_memory_at", "memory_pk", "at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    shape: Mapped[str] = mapped_column(String(20), nullable=False)
    model: Mapped[str | None] = mapped_column(NulSafeString(200))
    turn: Mapped[int] = mapped_column(Integer, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    reported_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Our estimate of the decorated request, compared with the provider's count on report.
    estimated_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # What no fade could shrink in it (instructions, tools, the note ask's reserve): the lane's cuts plan
    # by the same budget.
    fixed_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # Turns whose note was asked for in this call (none when no ask).
    note_ask_first_turn: Mapped[int | None] = mapped_column(Integer)
    note_ask_last_turn: Mapped[int | None] = mapped_column(Integer)
    # The decorate whose request replaced this one's user message before it was reported (migration 0019).
    superseded_by: Mapped[str | None] = mapped_column(String(40))


class ReplacedMessageRow(Base):
    """A user message no reply followed, replaced by the agent's next request: out of the history, kept here."""

    __tablename__ = "replaced_messages"
    __table_args__ = (Index("ix_replaced_messages_memory_seq", "memory_pk", "seq"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    turn: Mapped[int] = mapped_column(Integer, nullable=False)
    role: Mapped[str] = mapped_column(String(40), nullable=False)
    body: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    replaced_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    replaced_by: Mapped[str] = mapped_column(String(40), nullable=False)


class OutboxEventRow(Base):
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
    created_at: Mapped[datetime] = now_column()
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
