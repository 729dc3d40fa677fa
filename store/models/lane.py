"""The lane's own records: jobs parked after failing, and sleeps prepared ahead of the next user turn."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, ForeignKey, Identity, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column
from store.nul import NulSafeText

__all__ = ["ParkedJobRow", "SleepPreparationRow"]


class ParkedJobRow(Base):
    """A job that kept failing: the lane moved on, the row stays for operators (and a later retry)."""

    __tablename__ = "lane_parked_jobs"
    __table_args__ = (UniqueConstraint("memory_pk", "seq", "job"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    job: Mapped[str] = mapped_column(String(60), nullable=False)
    error: Mapped[str] = mapped_column(NulSafeText, nullable=False)
    created_at: Mapped[datetime] = now_column()
    # An operator asked for it to run again (`lethe jobs retry`), and when it then succeeded; a retry that fails
    # again records its new error and stays open.
    retried_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SleepPreparationRow(Base):
    """The sleep after the user message at `for_user_message_at` was prepared: history cut and scored."""

    __tablename__ = "sleep_preparations"
    __table_args__ = (UniqueConstraint("memory_pk", "for_user_message_at"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), nullable=False)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    for_user_message_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    episodes_cut: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    units_scored: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = now_column()
