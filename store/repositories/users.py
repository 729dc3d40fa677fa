"""Users: a memory bound to the person it belongs to, and the hidden memory that holds that person's graph."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import MemoryRow
from store.models.users import UserRow
from store.records import MemoryRecord, row_of
from store.repositories.user_recall import graph_memory_id

__all__ = ["UserLink", "bound_user", "ensure_user", "bind_memory"]


@dataclass(frozen=True)
class UserLink:
    user_pk: int
    user_id: str
    graph_memory_pk: int
    graph_memory_id: str


async def ensure_user(session: AsyncSession, *, tenant_id: str, user_id: str) -> UserLink:
    """The user, made with its graph memory on first sight; two first calls at once make one."""
    await session.execute(insert(UserRow).values(tenant_id=tenant_id, user_id=user_id)
                          .on_conflict_do_nothing(index_elements=["tenant_id", "user_id"]))
    user = (await session.execute(select(UserRow).where(UserRow.tenant_id == tenant_id, UserRow.user_id == user_id)
                                  .with_for_update())).scalar_one()
    graph_id = graph_memory_id(user_id)
    if user.graph_memory_pk is None:
        await session.execute(insert(MemoryRow).values(tenant_id=tenant_id, memory_id=graph_id, kind="user_graph")
                              .on_conflict_do_nothing(index_elements=["tenant_id", "memory_id"]))
        graph_pk = (await session.execute(select(MemoryRow.id).where(
            MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == graph_id))).scalar_one()
        await session.execute(update(UserRow).where(UserRow.id == user.id).values(graph_memory_pk=graph_pk))
        await session.execute(update(MemoryRow).where(MemoryRow.id == graph_pk).values(user_pk=user.id))
        user.graph_memory_pk = graph_pk
    return UserLink(user.id, user.user_id, int(user.graph_memory_pk), graph_id)


async def bound_user(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> str | None:
    """The user id the memory belongs to, if any."""
    return (await session.execute(
        select(UserRow.user_id).join(MemoryRow, MemoryRow.user_pk == UserRow.id)
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_pk))).scalar_one_or_none()


async def bind_memory(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, user_id: str) -> str | None:
    """Bind the (locked) memory to `user_id` if it has no user yet; returns the user it already had when that
    is someone else (the caller refuses), else None."""
    row = row_of(memory)
    if row.user_pk is not None:
        bound = await bound_user(session, tenant_id=tenant_id, memory_pk=row.id)
        return bound if bound != user_id else None
    link = await ensure_user(session, tenant_id=tenant_id, user_id=user_id)
    row.user_pk = link.user_pk
    return None
