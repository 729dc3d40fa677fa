"""The knowledge graph's own records: entities with their aliases, and passages of sealed episodes.

Facts (`store.models.mechanism.Fact`) are the graph's edges; their graph columns (entities, source, merges,
retirement, conflict, search indexes) are declared there. Vectors are 384-d, searched by cosine (HNSW).
"""

from __future__ import annotations

from datetime import datetime

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Identity,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from contracts.vectors import DIMENSIONS
from store.models.base import GIN_NO_PENDING, Base, now_column
from store.nul import NulSafeText

__all__ = ["EntityRow", "EntityAliasRow", "PassageRow"]

_MEMORY_FK = "memories.id"


class EntityRow(Base):
    """One thing the memory's facts speak of, under its canonical name."""

    __tablename__ = "entities"
    __table_args__ = (
        Index("ix_entities_memory", "memory_pk", "id"),
        Index("ix_entities_name_trgm", "name", postgresql_using="gin",
              postgresql_with=GIN_NO_PENDING, postgresql_ops={"name": "gin_trgm_ops"}),
        Index("ix_entities_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    name: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    kind: Mapped[str | None] = mapped_column(String(40))
    embedding: Mapped[list[float] | None] = mapped_column(Vector(DIMENSIONS))
    # The note call (decorate id) that first named it: names from that same call may still make it more specific.
    origin: Mapped[str] = mapped_column(String(80), nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_at: Mapped[datetime] = now_column()


class EntityAliasRow(Base):
    """Every name an entity has been given; a name belongs to one entity of a memory."""

    __tablename__ = "entity_aliases"
    __table_args__ = (
        UniqueConstraint("memory_pk", "key"),
        Index("ix_entity_aliases_entity", "entity_id"),
        Index("ix_entity_aliases_trgm", "name", postgresql_using="gin",
              postgresql_with=GIN_NO_PENDING, postgresql_ops={"name": "gin_trgm_ops"}),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    entity_id: Mapped[int] = mapped_column(ForeignKey("entities.id", ondelete="CASCADE"), nullable=False)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    name: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    # The name folded (case, spacing): what makes two spellings one alias.
    key: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    # The fact that first used this name, and the judge's confidence that it names this entity.
    fact_key: Mapped[str] = mapped_column(String(80), nullable=False)
    score: Mapped[float] = mapped_column(Float, nullable=False, default=1.0)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class PassageRow(Base):
    """A stretch of a sealed episode's messages, indexed by words, trigrams and meaning; kept once forgotten."""

    __tablename__ = "passages"
    __table_args__ = (
        Index("ux_passages_episode", "memory_pk", "episode_key", "ordinal", unique=True),
        Index("ix_passages_words", "words", postgresql_using="gin", postgresql_with=GIN_NO_PENDING),
        Index("ix_passages_trgm", "text", postgresql_using="gin",
              postgresql_with=GIN_NO_PENDING, postgresql_ops={"text": "gin_trgm_ops"}),
        Index("ix_passages_embedding", "embedding", postgresql_using="hnsw",
              postgresql_ops={"embedding": "vector_cosine_ops"}),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    episode_key: Mapped[str] = mapped_column(String(80), nullable=False)
    ordinal: Mapped[int] = mapped_column(Integer, nullable=False)
    first_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    first_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    last_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    # Cut from messages and tool outputs, which may hold NUL (store/nul.py).
    text: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    words: Mapped[str] = mapped_column(TSVECTOR, nullable=False)
    # None only for an imported passage until its lane embeds it (migration 0028).
    embedding: Mapped[list[float] | None] = mapped_column(Vector(DIMENSIONS))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # In a user's graph (migration 0027): the conversation whose quiet turns it holds.
    origin_memory_pk: Mapped[int | None] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="SET NULL"))
    origin_memory_id: Mapped[str | None] = mapped_column(String(128))
