"""Memories: found or created per tenant, locked for the hot path's one short transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import InvalidInput, NotFound
from store.models import DecorationRow, IdempotencyRow, MemoryRow, MessageRow
from store.records import DecorationRecord, MemoryRecord, frozen_copy, row_of

__all__ = [
    "add_decoration",
    "count_messages",
    "erase_memory",
    "get_decoration",
    "get_memory",
    "latest_decoration",
    "lock_memory",
    "lock_memory_row",
    "mark_reported",
    "owe_sleep",
    "reread_version",
    "supersede_unreported",
    "was_reported",
]


# Built once: every decorate and report takes this lock first, and building it again would cost the gateway's
# event loop at every call.
_NAMED = (
    select(MemoryRow)
    .where(MemoryRow.tenant_id == bindparam("tenant_id"), MemoryRow.memory_id == bindparam("memory_id"))
    .execution_options(populate_existing=True)
)
_LOCKING = _NAMED.with_for_update(key_share=True)
_LOCKING_TO_DELETE = _NAMED.with_for_update()  # the lock a delete of the row takes (erase_memory)


async def lock_memory_row(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> bool:
    """`lock_memory`'s lock, by row id, for a lane job about to change rows the hot path changes too (facts),
    so both take the memory's row before those rows; False when the row is gone (the memory erased)."""
    return (await session.execute(
        select(MemoryRow.id).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_pk)
        .with_for_update(key_share=True)
    )).scalar_one_or_none() is not None


async def lock_memory(
    session: AsyncSession, *, tenant_id: str, memory_id: str, create: bool = True
) -> MemoryRecord:
    """The memory's row, created if new (when `create`), locked until the transaction ends.

    The row lock is the per-memory lock: decorates on one memory serialise here, other memories never wait.
    It is `FOR NO KEY UPDATE`, the lock an update of the row takes: it waits for a write that moves the memory's
    version, never for a transaction that only adds rows pointing at the memory (a passage, an entity, a
    prepared walk), whose foreign key holds a key-share lock on the row until it commits.
    """
    names = {"tenant_id": tenant_id, "memory_id": memory_id}
    memory = (await session.execute(_LOCKING, names)).scalar_one_or_none()
    if memory is None and create:  # new: only its first call pays for the insert
        await session.execute(
            insert(MemoryRow)
            .values(tenant_id=tenant_id, memory_id=memory_id)
            .on_conflict_do_nothing(index_elements=["tenant_id", "memory_id"])
        )
        memory = (await session.execute(_LOCKING, names)).scalar_one_or_none()
    if memory is None:
        raise NotFound(f"no memory {memory_id!r}")
    return MemoryRecord(memory)


async def reread_version(session: AsyncSession, memory: MemoryRecord) -> None:
    """Read back the mechanism version this transaction's writes moved (its triggers move it in the
    database, not in the locked row held here), so what is read next sees those writes."""
    await session.flush()
    await session.refresh(row_of(memory), ["mechanism_version"])


async def get_memory(session: AsyncSession, *, tenant_id: str, memory_id: str) -> MemoryRecord:
    memory = (
        await session.execute(
            select(MemoryRow).where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id)
        )
    ).scalar_one_or_none()
    if memory is None:
        # Another tenant's memory and a missing one must look the same.
        raise NotFound(f"no memory {memory_id!r}")
    return MemoryRecord(memory)


async def count_messages(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> int:
    return (
        await session.execute(
            select(func.count())
            .select_from(MessageRow)
            .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk)
        )
    ).scalar_one()


def add_decoration(
    session: AsyncSession,
    *,
    decorate_id: str,
    tenant_id: str,
    memory: MemoryRecord,
    shape: str,
    model: str,
    at: datetime,
    estimated_tokens: int,
    fixed_tokens: int,
    note_ask_turns: tuple[int, int] | None,
) -> None:
    session.add(DecorationRow(
        id=decorate_id, memory_pk=memory.id, tenant_id=tenant_id, shape=shape, model=model, turn=memory.last_turn,
        at=at, estimated_tokens=estimated_tokens, fixed_tokens=fixed_tokens,
        note_ask_first_turn=note_ask_turns[0] if note_ask_turns else None,
        note_ask_last_turn=note_ask_turns[1] if note_ask_turns else None,
    ))


async def mark_reported(session: AsyncSession, memory: MemoryRecord, decoration: DecorationRecord, *,
                        at: datetime) -> None:
    """The decorate was reported, at `at`; the caller holds the memory's lock."""
    row_of(memory).latest_at = at
    # Read by `get_decoration` in this transaction: the session hands back that row without a query.
    row = await session.get(DecorationRow, decoration.id)
    if row is not None:
        row.reported_at = at


def owe_sleep(memory: MemoryRecord, *, owed: bool) -> None:
    """Remember a sleep that met a fade in progress (or that the owed one happened); the caller holds the lock."""
    if memory.sleep_owed != owed:
        row_of(memory).sleep_owed = owed


async def supersede_unreported(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, by: str) -> None:
    """The memory's decorates not reported yet answer a request the agent has replaced: `by` supersedes them,
    and their reports are refused."""
    await session.execute(update(DecorationRow).where(
        DecorationRow.tenant_id == tenant_id, DecorationRow.memory_pk == memory.id,
        DecorationRow.reported_at.is_(None), DecorationRow.superseded_by.is_(None)).values(superseded_by=by))


async def latest_decoration(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> DecorationRecord | None:
    """The memory's last decorate: its model and fixed part are what the lane plans cuts by."""
    row = (await session.execute(
        select(DecorationRow).where(DecorationRow.tenant_id == tenant_id, DecorationRow.memory_pk == memory_pk)
        .order_by(DecorationRow.at.desc()).limit(1)
    )).scalar_one_or_none()
    return None if row is None else frozen_copy(row, DecorationRecord)


async def was_reported(session: AsyncSession, *, tenant_id: str, decorate_id: str) -> bool:
    reported = await session.execute(
        select(DecorationRow.reported_at).where(DecorationRow.tenant_id == tenant_id, DecorationRow.id == decorate_id))
    return reported.scalar_one_or_none() is not None


async def get_decoration(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord,
                         decorate_id: str) -> DecorationRecord:
    decoration = await session.get(DecorationRow, decorate_id)
    if decoration is None or decoration.memory_pk != memory.id or decoration.tenant_id != tenant_id:
        raise InvalidInput(f"no decorate {decorate_id!r} in this memory", field="decorate_id")
    return frozen_copy(decoration, DecorationRecord)


async def erase_memory(session: AsyncSession, *, tenant_id: str, memory_id: str) -> None:
    """Delete the memory and everything it holds: its rows cascade; rows keyed by its name go explicitly.

    The row is locked `FOR UPDATE` at once, the lock its delete needs, not the hot path's weaker one: a lane
    transaction that has added a row pointing at the memory finishes first, and no new one starts under the erase.
    Holding the weaker lock while the delete waits for that transaction, which then stamps a change under the
    memory's lock, is a deadlock that Postgres breaks by failing one of the two.
    """
    memory = (await session.execute(_LOCKING_TO_DELETE, {"tenant_id": tenant_id, "memory_id": memory_id})
              ).scalar_one_or_none()
    if memory is None:
        raise NotFound(f"no memory {memory_id!r}")
    await session.execute(delete(IdempotencyRow).where(
        IdempotencyRow.tenant_id == tenant_id, IdempotencyRow.memory_id == memory_id))
    await session.execute(delete(MemoryRow).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory.id))
