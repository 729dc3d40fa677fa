"""Traces: how strongly each fact is written into each episode.

The hot path and the lane both go through here under the memory's row lock (`memories.lock_memory`).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.traces import Trace
from store.models import FactRow, TraceRow

__all__ = ["add_traces", "load_traces"]


async def load_traces(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, counted_only: bool = True,
    changed_after: int | None = None,
) -> list[Trace]:
    """Traces in the order written; by default only counted ones, the only ones activation sums; with
    `changed_after`, only those written after that mechanism version."""
    # A fact merged into another (a restatement) lends it its traces: they count for the fact that stands.
    merged = (
        select(FactRow.fact_key, FactRow.merged_into)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.merged_into.is_not(None))
        .subquery()
    )
    query = (
        select(TraceRow.at, TraceRow.score, TraceRow.counted, TraceRow.episode_key,
               func.coalesce(merged.c.merged_into, TraceRow.fact_key), TraceRow.encoding)
        .outerjoin(merged, merged.c.fact_key == TraceRow.fact_key)
        .where(TraceRow.tenant_id == tenant_id, TraceRow.memory_pk == memory_pk)
        .order_by(TraceRow.id)
    )
    if counted_only:
        query = query.where(TraceRow.counted)
    if changed_after is not None:
        query = query.where(TraceRow.changed_version > changed_after)
    rows = await session.execute(query)
    return [Trace(at=at, score=score, counted=counted, episode_id=episode, fact_id=fact, encoding=encoding)
            for at, score, counted, episode, fact, encoding in rows]


async def add_traces(session: AsyncSession, *, tenant_id: str, memory_pk: int, traces: Iterable[Trace]) -> int:
    """Insert traces; one already written (same encoding episode, or same fact and episode) is left as it was.

    Traces are never updated, so a retried job adds nothing twice. Returns how many were new.
    """
    values = [
        {"memory_pk": memory_pk, "tenant_id": tenant_id, "episode_key": t.episode_id, "fact_key": t.fact_id,
         "at": t.at, "score": t.score, "counted": t.counted, "encoding": t.encoding}
        for t in traces
    ]
    if not values:
        return 0
    result = await session.execute(
        insert(TraceRow).values(values).on_conflict_do_nothing().returning(TraceRow.id)
    )
    return len(result.all())
