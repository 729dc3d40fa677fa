"""The declarative base every table shares."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["GIN_NO_PENDING", "Base", "now_column"]


class Base(DeclarativeBase):
    pass


def now_column() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


# Word and trigram indexes take new entries straight into the index, never into a pending list every search
# would read through (migration 0015 says why).
GIN_NO_PENDING = {"fastupdate": "off"}
