"""Memories: found or created per tenant, locked for the hot path's one short transaction."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import NotFound
from store.models import Memory, Message

__all__ = ["count_messages", "get_memory", "lock_memory"]


async def lock_memory(
    session: AsyncSession, *, tenant_id: str, memory_id: str, create: bool = True
) -> Memory:
    """The memory's row, created if new (when `create`), locked until the transaction ends.

    The row lock is the per-memory lock: decorates on one memory serialise here, other memories never wait.
    """
    if create:
        await session.execute(
            insert(Memory)
            .values(tenant_id=tenant_id, memory_id=memory_id)
            .on_conflict_do_nothing(index_elements=["tenant_id", "memory_id"])
        )
    memory = (
        await session.execute(
            select(Memory)
            .where(Memory.tenant_id == tenant_id, Memory.memory_id == memory_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).scalar_one_or_none()
    if memory is None:
        raise NotFound(f"no memory {memory_id!r}")
    return memory


async def get_memory(session: AsyncSession, *, tenant_id: str, memory_id: str) -> Memory:
    memory = (
        await session.execute(
            select(Memory).where(Memory.tenant_id == tenant_id, Memory.memory_id == memory_id)
        )
    ).scalar_one_or_none()
    if memory is None:
        # Another tenant's memory and a missing one must look the same.
        raise NotFound(f"no memory {memory_id!r}")
    return memory


async def count_messages(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> int:
    return (
        await session.execute(
            select(func.count())
            .select_from(Message)
            .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk)
        )
    ).scalar_one()
