"""The mechanism's records: episodes and their history, facts, traces, boundary scores and note calls.

Engine ids (`episode_key`, `fact_key`) are kept as the engine names them; rows add the memory and tenant.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import GIN_NO_PENDING, Base, now_column
from store.nul import NulSafeString, NulSafeText

__all__ = ["BoundaryScoreRow", "EpisodeRow", "EpisodeTransitionRow", "FactRow", "IdempotencyRow", "NoteCallRow",
           "TraceRow"]

_MEMORY_FK = "memories.id"


class EpisodeRow(Base):
    __tablename__ = "episodes"
    __table_args__ = (UniqueConstraint("memory_pk", "episode_key"),
                      Index("ix_episodes_changed", "memory_pk", "changed_version"),
                      # What the lane's judge_salience looks for after every decorate and report.
                      Index("ix_episodes_unjudged", "memory_pk", "first_seq",
                            postgresql_where=text("act IS NULL AND state <> 'forgotten'")))

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    episode_key: Mapped[str] = mapped_column(String(80), nullable=False)
    state: Mapped[str] = mapped_column(String(20), nullable=False)
    first_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    first_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    last_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    tokens: Mapped[int] = mapped_column(Integer, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    facts_written: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    sealed_without_facts: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # Salience (migration 0026, engine/salience.py): its act, the intensity of the user's tone in it, and the
    # salience its encoding trace counts; all None until the lane's `judge_salience` has judged it, once.
    act: Mapped[str | None] = mapped_column(String(20))
    intensity: Mapped[float | None] = mapped_column(Float)
    salience: Mapped[float | None] = mapped_column(Float)
    # When the note ask for it was first made, and how many calls have asked since.
    asked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    asks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = now_column()
    # The mechanism version of its last change (migration 0013): a reader holding version N reads only later rows.
    changed_version: Mapped[int] = mapped_column(BigInteger, server_default="0", nullable=False)


class EpisodeTransitionRow(Base):
    """Every change of an episode's state, in order: its history, for the export and for operators."""

    __tablename__ = "episode_transitions"
    __table_args__ = (Index("ix_episode_transitions_memory", "memory_pk", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    episode_key: Mapped[str] = mapped_column(String(80), nullable=False)
    before: Mapped[str | None] = mapped_column(String(20))
    after: Mapped[str] = mapped_column(String(20), nullable=False)
    reason: Mapped[str] = mapped_column(String(40), nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class FactRow(Base):
    """A fact the model wrote with the note tool, with its provenance and validity."""

    __tablename__ = "facts"
    __table_args__ = (
        UniqueConstraint("memory_pk", "fact_key"),
        Index("ix_facts_changed", "memory_pk", "changed_version"),
        Index("ix_facts_constraints", "memory_pk",
              postgresql_where=text("kind = 'constraint' AND retired_at IS NULL AND merged_into IS NULL")),
        CheckConstraint("kind IN ('constraint', 'decision', 'correction', 'dead_end', 'open_question', 'fact')",
                        name="ck_facts_kind"),
        Index("ix_facts_unintegrated", "memory_pk", "id", postgresql_where=text("integrated_at IS NULL")),
        # A fact is fed into its user's graph once, however often the feeding job is retried.
        Index("ux_facts_origin", "memory_pk", "origin_memory_id", "origin_fact_key", unique=True,
              postgresql_where=text("origin_fact_key IS NOT NULL")),
        Index("ix_facts_subject_entity", "memory_pk", "subject_entity_id"),
        Index("ix_facts_object_entity", "memory_pk", "object_entity_id"),
        Index("ix_facts_words", "words", postgresql_using="gin", postgresql_with=GIN_NO_PENDING),
        Index("ix_facts_note_trgm", "note", postgresql_using="gin",
              postgresql_with=GIN_NO_PENDING, postgresql_ops={"note": "gin_trgm_ops"}),
        Index("ix_facts_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    fact_key: Mapped[str] = mapped_column(String(80), nullable=False)
    # Written from a model's note call: may hold NUL (store/nul.py).
    note: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    subject: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    object: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    milestone: Mapped[bool] = mapped_column(Boolean, nullable=False)
    episode_keys: Mapped[list[str]] = mapped_column(ARRAY(String(80)), nullable=False)
    first_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    last_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    note_call_id: Mapped[int | None] = mapped_column(ForeignKey("note_calls.id", ondelete="CASCADE"))
    # Who said it: the user's own words, the assistant's inference, a tool's output, or unknown.
    source: Mapped[str] = mapped_column(String(12), nullable=False, default="unknown", server_default="unknown")
    # Validity: a newer fact that contradicts this one retires it, dated and named; nothing is deleted.
    valid_from: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    retired_by: Mapped[str | None] = mapped_column(String(80))
    # Claim kinds (migration 0025): what kind of claim it is; an open question's answer; how it was retired
    # (correction, revision, update); and on a newer claim, the earlier claim of the same voice it revises.
    kind: Mapped[str] = mapped_column(String(16), nullable=False, default="fact", server_default="fact")
    settled_by: Mapped[str | None] = mapped_column(String(80))
    settled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    retired_as: Mapped[str | None] = mapped_column(String(12))
    revises: Mapped[str | None] = mapped_column(String(80))
    # The graph (migration 0010); filled by the lane's `integrate_facts`, which sets `integrated_at` last.
    subject_entity_id: Mapped[int | None] = mapped_column(ForeignKey("entities.id", ondelete="SET NULL"))
    object_entity_id: Mapped[int | None] = mapped_column(ForeignKey("entities.id", ondelete="SET NULL"))
    merged_into: Mapped[str | None] = mapped_column(String(80))  # a restatement: its provenance joins that fact
    merged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    conflict_with: Mapped[str | None] = mapped_column(String(80))  # unsettled: shown beside that fact
    integrated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    words: Mapped[str | None] = mapped_column(TSVECTOR)
    embedding: Mapped[list[float] | None] = mapped_column(Vector(384))
    # The mechanism version of its last change (migration 0013): a reader holding version N reads only later rows.
    changed_version: Mapped[int] = mapped_column(BigInteger, server_default="0", nullable=False)
    # In a user's graph (migration 0027): the conversation and fact it was fed from. The name outlives the
    # conversation, so a fact still says where it came from once that memory is erased.
    origin_memory_pk: Mapped[int | None] = mapped_column(ForeignKey("memories.id", ondelete="SET NULL"))
    origin_memory_id: Mapped[str | None] = mapped_column(String(128))
    origin_fact_key: Mapped[str | None] = mapped_column(String(80))


class TraceRow(Base):
    """One time something mattered to an episode (or a fact). Never updated: the record is permanent."""

    __tablename__ = "traces"
    __table_args__ = (
        # Idempotency: one encoding trace per episode, one judgment per (fact, episode).
        Index("ix_traces_changed", "memory_pk", "changed_version"),
        Index("ux_traces_encoding", "memory_pk", "episode_key", unique=True, postgresql_where=text("encoding")),
        Index("ux_traces_fact_episode", "memory_pk", "fact_key", "episode_key", unique=True,
              postgresql_where=text("NOT encoding")),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    episode_key: Mapped[str | None] = mapped_column(String(80))
    fact_key: Mapped[str | None] = mapped_column(String(80))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    score: Mapped[float] = mapped_column(Float, nullable=False)
    counted: Mapped[bool] = mapped_column(Boolean, nullable=False)
    encoding: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_at: Mapped[datetime] = now_column()
    # The mechanism version of its last change (migration 0013): a reader holding version N reads only later rows.
    changed_version: Mapped[int] = mapped_column(BigInteger, server_default="0", nullable=False)


class BoundaryScoreRow(Base):
    """A unit's scores as the first and as the last message of a concept; only their order is used."""

    __tablename__ = "boundary_scores"
    __table_args__ = (UniqueConstraint("memory_pk", "unit_first_seq"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    unit_first_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    unit_last_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    first_score: Mapped[float] = mapped_column(Float, nullable=False)
    last_score: Mapped[float] = mapped_column(Float, nullable=False)
    judge: Mapped[str] = mapped_column(String(80), nullable=False)


class NoteCallRow(Base):
    """A note call as the model made it, kept raw; `taken` says whether its facts were written."""

    __tablename__ = "note_calls"
    # Whether a note call was taken already (report and decorate both ask) is one lookup.
    __table_args__ = (Index("ix_note_calls_memory_call", "memory_pk", "call_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    decorate_id: Mapped[str] = mapped_column(String(40), nullable=False)
    call_id: Mapped[str] = mapped_column(NulSafeString(200), nullable=False)
    arguments: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    taken: Mapped[bool] = mapped_column(Boolean, nullable=False)
    error: Mapped[str | None] = mapped_column(NulSafeText)
    episode_keys: Mapped[list[str]] = mapped_column(ARRAY(String(80)), nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class IdempotencyRow(Base):
    """The first answer to a write, replayed for any retry with the same key and body."""

    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("tenant_id", "memory_id", "endpoint", "key"),
        Index("ix_idempotency_records_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    memory_id: Mapped[str] = mapped_column(String(128), nullable=False)
    endpoint: Mapped[str] = mapped_column(String(20), nullable=False)
    key: Mapped[str] = mapped_column(String(200), nullable=False)
    body_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    status_code: Mapped[int] = mapped_column(Integer, nullable=False)
    # The answer's JSON exactly as sent, zlib-compressed: a decorate's answer holds the whole request, and
    # storing it as bytes costs a fraction of JSONB's parse. `response` holds answers written before 0004.
    response_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    response: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = now_column()
