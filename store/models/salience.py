"""The user's usual tone per memory (engine/tone.py): what the intensity half of salience is judged against."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Integer, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base

__all__ = ["ToneBaselineRow"]


class ToneBaselineRow(Base):
    """Running statistics of the user's tone, through one message; written by the lane's `judge_salience` in the
    transaction that stores the acts it judged, so a retried job never folds a message twice."""

    __tablename__ = "tone_baselines"

    memory_pk: Mapped[int] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(40), nullable=False)
    messages: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    through_seq: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # Feature -> [mean, sum of squared deviations].
    stats: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
