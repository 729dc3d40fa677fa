"""A tenant's users: list and read them, manage the facts of each one's graph as a memory's are managed, and erase
a user (with `memories=true`, every conversation of theirs too)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request

from api.body import parse_json
from api.deps import ClockDep, HotPathDep, RelayDep, ServicesDep, TenantDep
from api.encoding import JSONBytes
from api.fact_schemas import NOT_BLANK, FactCorrect, FactCreate, UserFactForgotten, UserFactHitsPublic, UserFactWritten
from api.openapi import BODY, TENANT, errors
from api.routes.facts import FactId, body_of
from api.schemas import MEMORY_ID_PATTERN
from api.user_schemas import UserErasedPublic, UserFactsPublic, UserListPublic, UserPublic
from service import facts as facts_service
from service import inspector
from service import users as users_service

router = APIRouter(prefix="/v1/users", tags=["users"])

UserId = Annotated[str, Path(pattern=MEMORY_ID_PATTERN.pattern, max_length=100)]
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)]


@router.get("", response_model=UserListPublic, responses=errors(*TENANT))
async def list_users(
    tenant_id: TenantDep, services: ServicesDep, limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=inspector.CURSOR_PATTERN)] = None,
) -> dict[str, Any]:
    """The tenant's users, newest first, `limit` per page; pass `next_cursor` on."""
    return await users_service.list_users(services.db, tenant_id=tenant_id, limit=limit, cursor=cursor)


@router.get("/{user_id}", response_model=UserPublic, responses=errors(*TENANT, 404))
async def get_user(user_id: UserId, tenant_id: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """The user's conversations, how many facts their graph holds, and the profile of what feeds it."""
    return await users_service.get_user(services.db, tenant_id=tenant_id, user_id=user_id)


@router.delete("/{user_id}", response_model=UserErasedPublic, responses=errors(*TENANT, 404))
async def erase_user(user_id: UserId, tenant_id: TenantDep, services: ServicesDep, hot_path: HotPathDep,
                     memories: bool = False) -> dict[str, Any]:
    """Erase the user and their graph; with `memories=true`, every conversation of theirs too, in one
    transaction. Their workflows are ended; conversations kept lose their user."""
    return await users_service.erase_user(hot_path, services.temporal, tenant_id=tenant_id, user_id=user_id,
                                          with_memories=memories)


@router.get("/{user_id}/facts", response_model=UserFactsPublic, responses=errors(*TENANT, 404))
async def user_facts(user_id: UserId, tenant_id: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """Every fact the user's graph ever held, current and retired, each with the conversation it came from."""
    return await users_service.user_facts(services.db, tenant_id=tenant_id, user_id=user_id)


@router.get("/{user_id}/facts/search", response_model=UserFactHitsPublic, responses=errors(*TENANT, 404))
async def search_facts(
    user_id: UserId, tenant_id: TenantDep, hot_path: HotPathDep,
    q: Annotated[str, Query(min_length=1, max_length=facts_service.MAX_QUERY, pattern=NOT_BLANK)],
    limit: Annotated[int, Query(ge=1, le=facts_service.MAX_SEARCH)] = 10,
) -> dict[str, Any]:
    """The user's facts in force, then passages of their quiet conversations, ranked as recall ranks them."""
    return await users_service.search(hot_path, tenant_id=tenant_id, user_id=user_id, query=q, limit=limit)


@router.post("/{user_id}/facts", status_code=201, response_model=UserFactWritten, response_class=JSONBytes,
             responses=errors(*TENANT, *BODY, 404, 409), openapi_extra=body_of(FactCreate))
async def add_fact(
    request: Request, user_id: UserId, tenant_id: TenantDep, hot_path: HotPathDep, relay: RelayDep,
    clock: ClockDep, idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """Add a fact to the user's graph (source `api`); the graph's lane integrates it."""
    body = parse_json(await request.body())
    answer = await users_service.add(hot_path, tenant_id=tenant_id, user_id=user_id, body=body, clock=clock,
                                     idempotency_key=idempotency_key)
    relay.wake()
    return JSONBytes(answer, status_code=201)


@router.post("/{user_id}/facts/{fact_id}/correct", status_code=201, response_model=UserFactWritten,
             response_class=JSONBytes, responses=errors(*TENANT, *BODY, 404, 409),
             openapi_extra=body_of(FactCorrect))
async def correct_fact(
    request: Request, user_id: UserId, fact_id: FactId, tenant_id: TenantDep, hot_path: HotPathDep,
    relay: RelayDep, clock: ClockDep, idempotency_key: IdempotencyKey = None,
) -> JSONBytes:
    """A new fact in place of this one, which it retires at once (409 when this one is no longer in force)."""
    body = parse_json(await request.body())
    answer = await users_service.correct(hot_path, tenant_id=tenant_id, user_id=user_id, fact_id=fact_id,
                                         body=body, clock=clock, idempotency_key=idempotency_key)
    relay.wake()
    return JSONBytes(answer, status_code=201)


@router.delete("/{user_id}/facts/{fact_id}", response_model=UserFactForgotten, responses=errors(*TENANT, 404))
async def forget_fact(
    user_id: UserId, fact_id: FactId, tenant_id: TenantDep, hot_path: HotPathDep, clock: ClockDep,
    erase: bool = False,
) -> dict[str, Any]:
    """Forget the fact, here and in the conversation it came from: never recalled again, kept in the export as
    forgotten by request; with `erase=true`, deleted outright in both."""
    return await users_service.forget(hot_path, tenant_id=tenant_id, user_id=user_id, fact_id=fact_id,
                                      erase=erase, clock=clock)
