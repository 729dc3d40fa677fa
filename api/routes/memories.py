"""A memory's calls: decorate before the model call, report after it, its state, export and erasure."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from api.body import parse_json
from api.deps import (
    AgentHeader,
    ClockDep,
    HotPathDep,
    MemoryIdDep,
    OptionsDep,
    RelayDep,
    ServicesDep,
    TenantDep,
    UserHeader,
)
from api.encoding import JSONBytes
from api.openapi import BODY, TENANT, errors, json_body
from api.schemas import DecorateResponse, ErasedPublic, ImportedPublic, MemoryPublic, ReportResponse
from service import decorate as decorate_service
from service import memory_import, memory_state
from service import report as report_service

router = APIRouter(prefix="/v1/memories", tags=["memories"])
log = logging.getLogger(__name__)

IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)]
# The request's shape where its keys cannot tell: `messages` for an Anthropic request with nothing only Anthropic has.
# Left out of the document: a schema-valid body of one shape sent under another's name is refused, as it must be.
ShapeHeader = Annotated[str | None, Header(alias="X-Lethe-Shape", max_length=40, include_in_schema=False)]


async def _json_body(request: Request) -> Any:
    # Read whole and capped by `BodyLimit` already; parsed under Lethe's rules (api/body.py).
    return parse_json(await request.body())


# Both answers are encoded once by their service (the bytes an idempotent retry gets back) and sent as they are;
# `response_model` documents their shape.
@router.post("/{memory_id}/decorate", response_model=DecorateResponse, response_class=JSONBytes,
             responses=errors(*TENANT, *BODY, 409),
             openapi_extra=json_body("ChatCompletionsRequest", "ResponsesRequest", "MessagesRequestBody"))
async def decorate(
    request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, hot_path: HotPathDep,
    relay: RelayDep, clock: ClockDep, options: OptionsDep, idempotency_key: IdempotencyKey = None,
    shape: ShapeHeader = None, user: UserHeader = None, agent: AgentHeader = None,
) -> JSONBytes:
    body = await _json_body(request)
    async with request.app.state.limits.decorating(tenant_id):
        answer = await decorate_service.decorate(hot_path, tenant_id=tenant_id, memory_id=memory_id, body=body,
                                                 clock=clock, idempotency_key=idempotency_key, shape=shape,
                                                 user_id=user, agent=agent)
    relay.wake()
    return JSONBytes(answer)


@router.post("/{memory_id}/report", response_model=ReportResponse, response_class=JSONBytes,
             responses=errors(*TENANT, *BODY, 404, 409), openapi_extra=json_body("ReportRequest"))
async def report(
    request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, hot_path: HotPathDep,
    relay: RelayDep, clock: ClockDep, options: OptionsDep, idempotency_key: IdempotencyKey = None,
    user: UserHeader = None, agent: AgentHeader = None,
) -> JSONBytes:
    body = await _json_body(request)
    answer = await report_service.report(hot_path, tenant_id=tenant_id, memory_id=memory_id, body=body,
                                         clock=clock, idempotency_key=idempotency_key, user_id=user, agent=agent)
    relay.wake(turn_over=True)
    return JSONBytes(answer)


@router.get("/{memory_id}", response_model=MemoryPublic, responses=errors(*TENANT, 404))
async def get_memory(memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep,
                     clock: ClockDep) -> dict[str, Any]:
    return await memory_state.memory_state(services.db, tenant_id=tenant_id, memory_id=memory_id, now=clock.now,
                                           weigh_kinds=services.hot_path.config.claim_kinds,
                                           salience=services.hot_path.config.salience)


@router.get("/{memory_id}/export", responses={
    200: {"description": "Everything the memory holds, as one JSON document.",
          "content": {"application/json": {"schema": {"type": "object"}}}}, **errors(*TENANT, 404)})
async def export(memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep) -> StreamingResponse:
    chunks = await memory_state.export_chunks(services.db, tenant_id=tenant_id, memory_id=memory_id)
    return StreamingResponse(chunks, media_type="application/json")


@router.delete("/{memory_id}", response_model=ErasedPublic, responses=errors(*TENANT, 404))
async def erase(memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep) -> ErasedPublic:
    ended = await memory_state.erase(services.db, services.temporal, tenant_id=tenant_id, memory_id=memory_id)
    return ErasedPublic(memory_id=memory_id, erased=True, workflow_ended=ended)


@router.post("/{memory_id}/import", status_code=201, response_model=ImportedPublic,
             responses=errors(*TENANT, *BODY, 409), openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": {"type": "object", "required": ["memory"], "properties": {
                     "memory": {"type": "object"}}, "additionalProperties": {"type": "array"}}}}}})
async def import_memory(request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep,
                        relay: RelayDep) -> dict[str, Any]:
    """Rebuild a memory from what its export produced, under this id (409 when it exists). Its lane then embeds
    what an export leaves out; until then it is found by words."""
    answer = await memory_import.import_memory(services.db, tenant_id=tenant_id, memory_id=memory_id,
                                               document=await _json_body(request))
    relay.wake()
    return answer
