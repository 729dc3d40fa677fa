"""The outbox: events for a memory's workflow, numbered per memory, written with the change they announce."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import MemoryRow, OutboxEventRow
from store.records import MemoryRecord, row_of

__all__ = [
    "PendingDelivery",
    "add_event",
    "claim_undelivered",
    "mark_delivered",
    "mark_processed",
]


@dataclass(frozen=True)
class PendingDelivery:
    """The newest undelivered event of one memory: what one signal carries."""

    memory_pk: int
    tenant_id: str
    memory_id: str
    newest_seq: int


def add_event(
    session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, kind: str, payload: dict[str, Any]
) -> int:
    """Queue an event; the caller holds the memory's lock, so the sequence has no gaps or races."""
    if memory.tenant_id != tenant_id:
        raise ValueError("memory belongs to another tenant")
    counters = row_of(memory)
    counters.last_event_seq += 1
    # The caller's trace context rides along, so the jobs this event causes join the same trace.
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    session.add(
        OutboxEventRow(
            memory_pk=memory.id, tenant_id=tenant_id, seq=counters.last_event_seq, kind=kind,
            payload={**payload, **carrier},
        )
    )
    return counters.last_event_seq


async def claim_undelivered(session: AsyncSession, *, limit: int = 200) -> list[PendingDelivery]:
    """Memories with events not yet signalled, oldest first.

    The relay's one read across tenants: it returns ids and numbers only, never content. Rows are
    locked (SKIP LOCKED) so two gateway replicas never signal the same rows at once.
    """
    locked = (
        select(OutboxEventRow.id)
        .where(OutboxEventRow.delivered_at.is_(None))
        .order_by(OutboxEventRow.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .cte("locked")
    )
    rows = await session.execute(
        select(MemoryRow.id, MemoryRow.tenant_id, MemoryRow.memory_id, func.max(OutboxEventRow.seq))
        .join(OutboxEventRow, OutboxEventRow.memory_pk == MemoryRow.id)
        .where(OutboxEventRow.id.in_(select(locked.c.id)))
        .group_by(MemoryRow.id, MemoryRow.tenant_id, MemoryRow.memory_id)
        .order_by(func.min(OutboxEventRow.id))
    )
    return [PendingDelivery(pk, tenant, memory_id, seq) for pk, tenant, memory_id, seq in rows]


async def mark_delivered(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, up_to_seq: int, at: datetime
) -> list[datetime]:
    """Returns when each event now delivered was written (the relay's lag)."""
    result = await session.execute(
        update(OutboxEventRow)
        .where(
            OutboxEventRow.tenant_id == tenant_id,
            OutboxEventRow.memory_pk == memory_pk,
            OutboxEventRow.seq <= up_to_seq,
            OutboxEventRow.delivered_at.is_(None),
        )
        .values(delivered_at=at)
        .returning(OutboxEventRow.created_at)
    )
    return list(result.scalars())



async def mark_processed(
    session: AsyncSession, *, tenant_id: str, memory_id: str, seq: int, at: datetime
) -> bool:
    """Record that the lane ran this event. Idempotent: a retried activity changes nothing the second time."""
    memory_pk = select(MemoryRow.id).where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id)
    result = await session.execute(
        update(OutboxEventRow)
        .where(
            OutboxEventRow.tenant_id == tenant_id,
            OutboxEventRow.memory_pk == memory_pk.scalar_subquery(),
            OutboxEventRow.seq == seq,
            OutboxEventRow.processed_at.is_(None),
        )
        .values(processed_at=at)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]
