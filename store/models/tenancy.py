"""Tenants and their API keys."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, DateTime, Float, ForeignKey, Identity, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column


class TenantRow(Base):
    __tablename__ = "tenants"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    created_at: Mapped[datetime] = now_column()


class ApiKeyRow(Base):
    """A tenant's bearer key, kept only as its SHA-256 (keys are long random strings, so no salt is needed)."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    created_at: Mapped[datetime] = now_column()
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SizeRatioRow(Base):
    """The provider's token count over our estimate of the same request, per tenant and model: a new memory
    on a known model starts corrected."""

    __tablename__ = "size_ratios"

    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    ratio: Mapped[float] = mapped_column(Float, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class ModelCeilingRow(Base):
    """A tenant's own ceiling for a model (or a family of them: `engine.ceilings.match_model`)."""

    __tablename__ = "tenant_model_ceilings"

    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    ceiling_tokens: Mapped[int] = mapped_column(Integer, nullable=False)
    updated_at: Mapped[datetime] = now_column()
