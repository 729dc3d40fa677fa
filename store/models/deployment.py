"""Settings a whole deployment shares, recorded once in its database (no tenant: every tenant's rows use them)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column


class DeploymentSettingRow(Base):
    """One recorded choice (the embedded model's precision): processes on other machines read it at start."""

    __tablename__ = "deployment_settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(String(200), nullable=False)
    recorded_at: Mapped[datetime] = now_column()
