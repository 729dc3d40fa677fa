"""Model usage for cost accounting."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Identity, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column


class ModelUsageRow(Base):
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
    created_at: Mapped[datetime] = now_column()
