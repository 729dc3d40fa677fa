"""A memory's calls: decorate before the model call, report after it, and its summary."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request

from api import hot_path
from api.deps import ClockDep, DatabaseDep, MemoryIdDep, RelayDep, SettingsDep, TenantDep
from api.schemas import DecorateResponse, MemoryPublic, ReportResponse
from engine.errors import InvalidInput, PayloadTooLarge

router = APIRouter(prefix="/v1/memories", tags=["memories"])


async def _json_body(request: Request, limit: int) -> Any:
    raw = await request.body()
    if len(raw) > limit:
        raise PayloadTooLarge(f"the body is {len(raw)} bytes; the limit is {limit} (LETHE_MAX_BODY_BYTES)")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"the body is not valid JSON: {exc}", field=None) from exc


@router.post("/{memory_id}/decorate", response_model=DecorateResponse)
async def decorate(
    request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, db: DatabaseDep,
    relay: RelayDep, clock: ClockDep, settings: SettingsDep,
) -> DecorateResponse:
    body = await _json_body(request, settings.max_body_bytes)
    result = await hot_path.decorate(db, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock)
    relay.wake()
    return result


@router.post("/{memory_id}/report", response_model=ReportResponse)
async def report(
    request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, db: DatabaseDep,
    relay: RelayDep, clock: ClockDep, settings: SettingsDep,
) -> ReportResponse:
    body = await _json_body(request, settings.max_body_bytes)
    result = await hot_path.report(db, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock)
    relay.wake()
    return result


@router.get("/{memory_id}", response_model=MemoryPublic)
async def get_memory(memory_id: MemoryIdDep, tenant_id: TenantDep, db: DatabaseDep) -> MemoryPublic:
    return MemoryPublic(**await hot_path.memory_summary(db, tenant_id=tenant_id, memory_id=memory_id))
