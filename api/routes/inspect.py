"""The memory inspector: the page at /inspect, its files, and the read-only calls it (and any API user) makes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.deps import CLOCK_PATTERN, ClockDep, MemoryIdDep, OptionsDep, ServicesDep, TenantDep
from api.inspect_schemas import ActivationPublic, FactsPublic, MemoryListPublic, WorkflowPublic
from api.openapi import TENANT, errors
from contracts.times import parse_time
from service import inspector

__all__ = ["install_inspector", "router"]

STATIC = Path(__file__).resolve().parents[1] / "static" / "inspect"
# Everything the page runs ships with the gateway: the policy forbids any other origin, so it works offline.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

router = APIRouter(prefix="/v1/memories", tags=["inspector"])


def _time(value: str | None, field: str) -> datetime | None:
    return None if value is None else parse_time(value, field)


@router.get("", response_model=MemoryListPublic, responses=errors(*TENANT))
async def list_memories(
    tenant_id: TenantDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=inspector.CURSOR_PATTERN)] = None,
    prefix: Annotated[str | None, Query(max_length=128)] = None,
) -> dict[str, Any]:
    """The tenant's memories, most recently active first, `limit` per page; pass `next_cursor` on."""
    return await inspector.list_memories(services.db, tenant_id=tenant_id, limit=limit, cursor=cursor, prefix=prefix)


@router.get("/{memory_id}/activation", response_model=ActivationPublic, responses=errors(*TENANT, 404))
async def activation(
    memory_id: MemoryIdDep,
    tenant_id: TenantDep,
    services: ServicesDep,
    clock: ClockDep,
    from_: Annotated[str | None, Query(alias="from", pattern=CLOCK_PATTERN)] = None,
    to: Annotated[str | None, Query(pattern=CLOCK_PATTERN)] = None,
    points: Annotated[int, Query(ge=2, le=400)] = 120,
    first_turn: Annotated[int | None, Query(ge=0)] = None,
    last_turn: Annotated[int | None, Query(ge=0)] = None,
    limit: Annotated[int, Query(ge=1, le=inspector.MAX_EPISODES)] = 300,
    newest: bool = False,
) -> dict[str, Any]:
    """Each episode's activation over time (the episodes overlapping the turn range, the oldest `limit` of them,
    or the newest with `newest=true`), its significance, and the memory's fades and sleeps."""
    return await inspector.activation(
        services.db, tenant_id=tenant_id, memory_id=memory_id, now=clock.now, start=_time(from_, "from"),
        end=_time(to, "to"), points=points, first_turn=first_turn, last_turn=last_turn, limit=limit, newest=newest,
        salience=services.hot_path.config.salience,
    )


@router.get("/{memory_id}/facts", response_model=FactsPublic, responses=errors(*TENANT, 404))
async def facts(memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep) -> dict[str, Any]:
    """Every fact the memory holds, current and retired, with validity and provenance."""
    return await inspector.facts(services.db, tenant_id=tenant_id, memory_id=memory_id)


@router.get("/{memory_id}/workflow", response_model=WorkflowPublic, responses=errors(*TENANT, 404))
async def workflow(
    memory_id: MemoryIdDep, tenant_id: TenantDep, services: ServicesDep, options: OptionsDep
) -> dict[str, Any]:
    """The memory's Temporal workflow id, and its page in the Temporal UI when LETHE_TEMPORAL_UI_URL is set."""
    return await inspector.workflow_link(services.db, tenant_id=tenant_id, memory_id=memory_id,
                                         namespace=options.temporal.namespace, ui_url=options.temporal.ui_url)


class _Policy:
    """Sends the page and its files with the content policy (and no caching of the page itself)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"content-security-policy", CSP.encode()),
                                      (b"x-content-type-options", b"nosniff"),
                                      (b"referrer-policy", b"no-referrer")]
            await send(message)

        await self.app(scope, receive, with_headers)


def install_inspector(app: FastAPI) -> None:
    app.include_router(router)

    @app.get("/inspect", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={
            "Content-Security-Policy": CSP, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"})

    app.mount("/inspect/static", _Policy(StaticFiles(directory=STATIC)), name="inspect-static")
