"""Parked lane jobs, behind the admin token: list them, and ask a memory's lane to run one again
(`service.parked_jobs`; the same as `lethe jobs parked` and `lethe jobs retry`)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from api.deps import AdminDep, ServicesDep
from api.openapi import errors
from service import parked_jobs

router = APIRouter(prefix="/v1/admin/jobs/parked", tags=["admin"])

ADMIN = (401, 422, 503)
JobId = Annotated[int, Path(ge=1, le=2**63 - 1)]


class ParkedJobPublic(BaseModel):
    id: int
    tenant_id: str
    memory_id: str
    seq: int
    job: str
    error: str
    parked_at: datetime
    retried_at: datetime | None
    resolved_at: datetime | None


def _public(job: parked_jobs.ParkedJob) -> ParkedJobPublic:
    return ParkedJobPublic(**vars(job))


@router.get("", response_model=list[ParkedJobPublic], responses=errors(*ADMIN))
async def list_parked(
    services: ServicesDep, _: AdminDep,
    tenant_id: Annotated[str | None, Query(max_length=40)] = None,
    memory_id: Annotated[str | None, Query(max_length=200)] = None,
    state: Literal["open", "resolved", "all"] = "open",
    after_id: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[ParkedJobPublic]:
    """Oldest first; page with `after_id` (the last id of the page before)."""
    found = await parked_jobs.list_parked(services.db, tenant_id=tenant_id, memory_id=memory_id, state=state,
                                          after_id=after_id, limit=limit)
    return [_public(job) for job in found]


@router.post("/{job_id}/retry", status_code=202, response_model=ParkedJobPublic, responses=errors(*ADMIN, 404, 409))
async def retry_parked(job_id: JobId, services: ServicesDep, _: AdminDep) -> ParkedJobPublic:
    """Asks the memory's lane to run the job again (202: it runs in the lane; the row's `resolved_at` is set once
    it succeeds)."""
    return _public(await parked_jobs.retry_parked(services.db, services.temporal, job_id=job_id,
                                                  task_queue=services.options.temporal.task_queue))
