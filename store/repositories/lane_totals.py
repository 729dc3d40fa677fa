"""Every lane's figures in sum, for the worker's metrics: pending events in all and for the memories with the
most, and parked jobs.

Deliberately across tenants (the caller runs it under `system_scope`, as the relay does); ids and counts only.
The pending events are counted on the outbox's partial index of unprocessed rows, so the read stays small
however long the outbox has grown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import MemoryRow, OutboxEventRow
from store.models.lane import ParkedJobRow

__all__ = ["LaneTotals", "lane_totals"]


@dataclass(frozen=True)
class LaneTotals:
    """Pending lane events in all, over how many memories, the largest backlogs, and parked jobs."""

    backlog: int = 0
    memories: int = 0
    # (tenant id, memory id, pending events), largest first.
    largest: list[tuple[str, str, int]] = field(default_factory=list)
    parked_jobs: int = 0


async def lane_totals(session: AsyncSession, *, top: int) -> LaneTotals:
    per_memory = (
        select(OutboxEventRow.memory_pk, func.count().label("pending"))
        .where(OutboxEventRow.processed_at.is_(None))
        .group_by(OutboxEventRow.memory_pk)
        .cte("per_memory")
    )
    backlog, memories = (await session.execute(
        select(func.coalesce(func.sum(per_memory.c.pending), 0), func.count()).select_from(per_memory)
    )).one()
    largest = await session.execute(
        select(MemoryRow.tenant_id, MemoryRow.memory_id, per_memory.c.pending)
        .join(MemoryRow, MemoryRow.id == per_memory.c.memory_pk)
        .order_by(per_memory.c.pending.desc(), MemoryRow.id)
        .limit(top)
    )
    parked = (await session.execute(select(func.count()).select_from(ParkedJobRow)
                                    .where(ParkedJobRow.resolved_at.is_(None)))).scalar_one()
    return LaneTotals(backlog=int(backlog), memories=int(memories),
                      largest=[(tenant, memory, int(pending)) for tenant, memory, pending in largest],
                      parked_jobs=int(parked))
