"""Parked lane jobs for operators: list them, and ask a memory's lane to run one again.

A retry goes to the memory's workflow as a signal (started first if it is not running), which runs the job
through the same path as the first time: success marks the row resolved, another failure parks it again with
its new error. Only jobs the lane runs for an event can be retried this way; a sleep's preparation is tried
again at the memory's next sleep.
"""

from __future__ import annotations

from datetime import UTC, datetime

from contracts import lane_names as names
from contracts.errors import Conflict, NotFound
from service.relay import TemporalClient, signal_memory
from store.db import Database
from store.repositories import parked_jobs
from store.repositories.parked_jobs import ParkedJob, ParkedState

__all__ = ["ParkedJob", "list_parked", "retry_parked"]


async def list_parked(db: Database, *, tenant_id: str | None = None, memory_id: str | None = None,
                      state: ParkedState = "open", after_id: int = 0, limit: int = 100) -> list[ParkedJob]:
    async with db.session() as session:
        return await parked_jobs.list_parked(session, tenant_id=tenant_id, memory_id=memory_id, state=state,
                                             after_id=after_id, limit=limit)


async def retry_parked(db: Database, temporal: TemporalClient, *, job_id: int, task_queue: str) -> ParkedJob:
    """Ask the job's memory to run it again; answers the row as it stands (retried_at set)."""
    async with db.session() as session, session.begin():
        job = await parked_jobs.find_parked(session, job_id)
        if job is None:
            raise NotFound(f"no parked job {job_id}")
        if job.resolved_at is not None:
            raise Conflict(f"parked job {job_id} was resolved at {job.resolved_at.isoformat()}: nothing to retry")
        if job.job not in names.RETRIABLE_JOBS:
            raise Conflict(f"parked job {job_id} ({job.job}) is not retried by hand: the lane tries it again at "
                           "the memory's next sleep")
        kind = await parked_jobs.event_kind(session, job)
        if kind is None:
            raise Conflict(f"the lane event of parked job {job_id} is gone (the memory was erased or pruned)")
        await signal_memory(temporal, task_queue=task_queue, tenant_id=job.tenant_id, memory_id=job.memory_id,
                            signal=names.RETRY_SIGNAL, args=[job.seq, kind, job.job])
        await parked_jobs.mark_retried(session, job_id, at=datetime.now(UTC))
    async with db.session() as session:
        found = await parked_jobs.find_parked(session, job_id)
    assert found is not None
    return found
