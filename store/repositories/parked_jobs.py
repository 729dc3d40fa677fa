"""Parked lane jobs across tenants, for operators (`lethe jobs`, `/v1/admin/jobs/parked`): list, find, mark retried.

Read by the migration/admin role (or under the admin scope), so every tenant's rows are visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import MemoryRow, OutboxEventRow
from store.models.lane import ParkedJobRow

__all__ = ["ParkedJob", "event_kind", "find_parked", "list_parked", "mark_retried"]

ParkedState = Literal["open", "resolved", "all"]


@dataclass(frozen=True)
class ParkedJob:
    id: int
    tenant_id: str
    memory_id: str
    seq: int
    job: str
    error: str
    parked_at: datetime
    retried_at: datetime | None
    resolved_at: datetime | None


def _parked(row: ParkedJobRow, memory_id: str) -> ParkedJob:
    return ParkedJob(id=row.id, tenant_id=row.tenant_id, memory_id=memory_id, seq=row.seq, job=row.job,
                     error=row.error, parked_at=row.created_at, retried_at=row.retried_at,
                     resolved_at=row.resolved_at)


async def list_parked(session: AsyncSession, *, tenant_id: str | None = None, memory_id: str | None = None,
                      state: ParkedState = "open", after_id: int = 0, limit: int = 100) -> list[ParkedJob]:
    """Oldest first, after `after_id` (paging by id)."""
    query = (select(ParkedJobRow, MemoryRow.memory_id).join(MemoryRow, MemoryRow.id == ParkedJobRow.memory_pk)
             .where(ParkedJobRow.id > after_id).order_by(ParkedJobRow.id).limit(limit))
    if tenant_id is not None:
        query = query.where(ParkedJobRow.tenant_id == tenant_id)
    if memory_id is not None:
        query = query.where(MemoryRow.memory_id == memory_id)
    if state == "open":
        query = query.where(ParkedJobRow.resolved_at.is_(None))
    elif state == "resolved":
        query = query.where(ParkedJobRow.resolved_at.is_not(None))
    return [_parked(row, memory) for row, memory in (await session.execute(query)).all()]


async def find_parked(session: AsyncSession, job_id: int) -> ParkedJob | None:
    found = (await session.execute(
        select(ParkedJobRow, MemoryRow.memory_id).join(MemoryRow, MemoryRow.id == ParkedJobRow.memory_pk)
        .where(ParkedJobRow.id == job_id))).first()
    return None if found is None else _parked(found[0], found[1])


async def event_kind(session: AsyncSession, job: ParkedJob) -> str | None:
    """The kind of the lane event the job ran for (None when the event is gone, or it ran for no event)."""
    return (await session.execute(
        select(OutboxEventRow.kind).join(MemoryRow, MemoryRow.id == OutboxEventRow.memory_pk)
        .where(OutboxEventRow.tenant_id == job.tenant_id, MemoryRow.memory_id == job.memory_id,
               OutboxEventRow.seq == job.seq))).scalar_one_or_none()


async def mark_retried(session: AsyncSession, job_id: int, *, at: datetime) -> None:
    await session.execute(update(ParkedJobRow).where(ParkedJobRow.id == job_id).values(retried_at=at))
