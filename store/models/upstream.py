"""A tenant's upstream: the OpenAI-compatible provider the proxy calls for it, its key encrypted at rest."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, LargeBinary, String, func
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column


class TenantUpstreamRow(Base):
    __tablename__ = "tenant_upstreams"

    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    base_url: Mapped[str] = mapped_column(String(2000), nullable=False)
    # Fernet token of the key (LETHE_SECRET_KEY); None for a provider that needs no key.
    api_key_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    # The key's last four characters, so an operator can tell which key is set without reading it.
    api_key_hint: Mapped[str | None] = mapped_column(String(8))
    created_at: Mapped[datetime] = now_column()
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now(),
                                                 onupdate=func.now(), nullable=False)
