"""Recall's records: each turn's recall block (as first placed, and as distilled), and the walk the lane
prepared for the next user message."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, Identity, Integer, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column
from store.nul import NulSafeText

__all__ = ["RecallBlockRow", "RecallWalkRow"]

_MEMORY_FK = "memories.id"


class RecallBlockRow(Base):
    """One turn's recall block, standing before the user message `before_seq`. `text` is as first placed;
    once distilled, `distilled_text` is what later requests carry, or nothing when `removed`."""

    __tablename__ = "recall_blocks"
    __table_args__ = (UniqueConstraint("memory_pk", "turn"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    turn: Mapped[int] = mapped_column(Integer, nullable=False)
    before_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # Facts and passages may quote tool output, which may hold NUL (store/nul.py).
    text: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    fact_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), nullable=False)
    passage_ids: Mapped[list[int]] = mapped_column(ARRAY(BigInteger), nullable=False)
    # The items as grouped, so distill can write the block again from those it keeps.
    items: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, nullable=False)
    # Where its facts' levels came from: `prepared` (the lane's walk, plus the message's own hits),
    # `inline` (a walk in the hot path), `hits` (the searches as they were, the inline walk out of time).
    provenance: Mapped[str] = mapped_column(String(20), nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    distilled_text: Mapped[str | None] = mapped_column(NulSafeText)
    distilled_fact_ids: Mapped[list[int] | None] = mapped_column(ARRAY(BigInteger))
    distilled_passage_ids: Mapped[list[int] | None] = mapped_column(ARRAY(BigInteger))
    removed: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    distilled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = now_column()


class RecallWalkRow(Base):
    """A walk the lane prepared after the reply of turn `for_turn - 1`, for the next user message: each fact
    rated, by id, with its level."""

    __tablename__ = "recall_walks"
    __table_args__ = (UniqueConstraint("memory_pk", "for_turn"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey(_MEMORY_FK, ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    for_turn: Mapped[int] = mapped_column(Integer, nullable=False)
    # The last message the walk read: the reply it was prepared from.
    after_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # [[fact id, level], ...] in the order the walk reached them.
    levels: Mapped[list[list[int]]] = mapped_column(JSONB, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_at: Mapped[datetime] = now_column()
