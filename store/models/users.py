"""People: a tenant's users, each with the memory that holds their graph, and the per-source profile of what
feeds it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Identity, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from store.models.base import Base, now_column

__all__ = ["SourceProfileRow", "UserRow"]


class UserRow(Base):
    """A person an agent talks to across conversations. `user_id` is the client's name, unique per tenant.

    The user's graph is kept in a memory of its own (`graph_memory_pk`, memory id `~user:<user_id>`, which no
    API path can name): the same tables, rules and lane as a conversation's graph, fed by the lanes of the
    user's conversations."""

    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("tenant_id", "user_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False)
    user_id: Mapped[str] = mapped_column(String(100), nullable=False)
    graph_memory_pk: Mapped[int | None] = mapped_column(ForeignKey("memories.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = now_column()


class SourceProfileRow(Base):
    """Whether facts of one source feed a tenant's user graphs. `source` is `user`, `assistant`, `tool`,
    `unknown`, `api`, `extracted`, or `agent:<name>` for what one agent's model wrote. A source with no row
    is muted unless the defaults (`engine.users.DEFAULT_PROFILE`) say otherwise."""

    __tablename__ = "source_profiles"

    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True)
    source: Mapped[str] = mapped_column(String(80), primary_key=True)
    feeds: Mapped[bool] = mapped_column(Boolean, nullable=False)
    updated_at: Mapped[datetime] = now_column()
