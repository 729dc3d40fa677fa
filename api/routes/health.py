"""Liveness and readiness for probes and load balancers."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from contracts.version import VERSION

__all__ = ["health_app", "router"]

router = APIRouter(tags=["health"])
# What a process needs answering to be ready, unless its app says less (the gateway: Postgres only).
READY_NEEDS = ("postgres", "temporal")


def health_app(db: Any, temporal: Any) -> FastAPI:
    """The worker's own `/healthz` and `/readyz`: the same probes as the gateway's, on its database and Temporal."""
    app = FastAPI(title="Lethe worker health", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.db, app.state.temporal = db, temporal
    app.include_router(router)
    return app


class Health(BaseModel):
    status: Literal["ok"]
    version: str


@router.get("/v1/health", response_model=Health)
async def health() -> Health:
    """The gateway is up, and which Lethe it is."""
    return Health(status="ok", version=VERSION)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up; says nothing about its dependencies."""
    return {"status": "ok"}


async def _check(coro: object) -> str:
    try:
        await asyncio.wait_for(coro, timeout=3)  # type: ignore[arg-type]
        return "ok"
    except Exception:  # noqa: BLE001 - any failure means not ready; the probe says no more than that
        return "unreachable"


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    # Each dependency: "ok" or "unreachable" (never an exception's name: nothing of the inside leaks).
    checks: dict[str, Literal["ok", "unreachable"]]


@router.get("/readyz", response_model=Readiness, responses={503: {
    "model": Readiness, "description": "Not ready; see Retry-After.",
    "headers": {"Retry-After": {"schema": {"type": "integer"}}}}})
async def readyz(request: Request) -> JSONResponse:
    """Ready when what this process needs answers: the gateway serves decorate and report on Postgres alone
    (the outbox holds the lane's events while Temporal is away), the worker needs both. Both are reported."""
    state = request.app.state
    postgres, temporal = await asyncio.gather(_check(state.db.ping()),
                                              _check(state.temporal.service_client.check_health()))
    checks = {"postgres": postgres, "temporal": temporal}
    ready = all(checks[name] == "ok" for name in getattr(state, "ready_needs", READY_NEEDS))
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": "5"},
    )
