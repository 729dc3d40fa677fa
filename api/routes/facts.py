"""A memory's facts managed by its user: search them, add one, correct one, forget (or erase) one."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request

from api.body import parse_json
from api.deps import ClockDep, HotPathDep, MemoryIdDep, RelayDep, TenantDep
from api.encoding import JSONBytes
from api.fact_schemas import NOT_BLANK, FactCorrect, FactCreate, FactForgotten, FactHitsPublic, FactWritten
from api.openapi import BODY, TENANT, errors
from service import facts as facts_service

router = APIRouter(prefix="/v1/memories", tags=["facts"])

IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)]
# Fact ids as the facts listing shows them (`fact_key`): a note's `dec_…:n`, an added one's `api_…`.
FactId = Annotated[str, Path(pattern=r"^[A-Za-z0-9._:-]{1,80}$")]


def body_of(model: type[Any]) -> dict[str, Any]:
    # The body is read by the service (its checks name the field at fault), so the document is given its shape.
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": model.model_json_schema()}}}}


@router.get("/{memory_id}/facts/search", response_model=FactHitsPublic, responses=errors(*TENANT, 404))
async def search_facts(
    memory_id: MemoryIdDep, tenant_id: TenantDep, hot_path: HotPathDep,
    q: Annotated[str, Query(min_length=1, max_length=facts_service.MAX_QUERY, pattern=NOT_BLANK)],
    limit: Annotated[int, Query(ge=1, le=facts_service.MAX_SEARCH)] = 10,
) -> dict[str, Any]:
    """The memory's facts in force, then its passages, ranked as recall ranks them, `limit` in all."""
    return await facts_service.search(hot_path, tenant_id=tenant_id, memory_id=memory_id, query=q, limit=limit)


@router.post("/{memory_id}/facts", status_code=201, response_model=FactWritten, response_class=JSONBytes,
             responses=errors(*TENANT, *BODY, 404, 409), openapi_extra=body_of(FactCreate))
async def add_fact(
    request: Request, memory_id: MemoryIdDep, tenant_id: TenantDep, hot_path: HotPathDep, relay: RelayDep,
    clock: ClockDep, idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """Add a fact (source `api`); the memory's lane brings it into the graph as it does a note's."""
    body = parse_json(await request.body())
    answer = await facts_service.add(hot_path, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock,
                                     idempotency_key=idempotency_key)
    relay.wake()
    return JSONBytes(answer, status_code=201)


@router.post("/{memory_id}/facts/{fact_id}/correct", status_code=201, response_model=FactWritten,
             response_class=JSONBytes, responses=errors(*TENANT, *BODY, 404, 409),
             openapi_extra=body_of(FactCorrect))
async def correct_fact(
    request: Request, memory_id: MemoryIdDep, fact_id: FactId, tenant_id: TenantDep, hot_path: HotPathDep,
    relay: RelayDep, clock: ClockDep, idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """A new fact in place of this one, which it retires at once (409 when this one is no longer in force)."""
    body = parse_json(await request.body())
    answer = await facts_service.correct(hot_path, tenant_id=tenant_id, memory_id=memory_id, fact_id=fact_id,
                                         body=body, clock=clock, idempotency_key=idempotency_key)
    relay.wake()
    return JSONBytes(answer, status_code=201)


@router.delete("/{memory_id}/facts/{fact_id}", response_model=FactForgotten, responses=errors(*TENANT, 404))
async def forget_fact(
    memory_id: MemoryIdDep, fact_id: FactId, tenant_id: TenantDep, hot_path: HotPathDep, clock: ClockDep,
    erase: bool = False,
) -> dict[str, Any]:
    """Forget the fact: never recalled, searched or shown again, kept in the export as forgotten by request;
    with `erase=true`, delete it and what hangs off it outright."""
    return await facts_service.forget(hot_path, tenant_id=tenant_id, memory_id=memory_id, fact_id=fact_id,
                                      erase=erase, clock=clock)
