"""Liveness and readiness for probes and load balancers."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up; says nothing about its dependencies."""
    return {"status": "ok"}


async def _check(coro: object) -> str:
    try:
        await asyncio.wait_for(coro, timeout=3)  # type: ignore[arg-type]
        return "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; its type is the detail
        return f"unreachable ({type(exc).__name__})"


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """Postgres and Temporal both answer."""
    state = request.app.state
    checks = {
        "postgres": await _check(state.db.ping()),
        "temporal": await _check(state.temporal.service_client.check_health()),
    }
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse(
        {"status": "ready" if ready else "not_ready", "checks": checks},
        status_code=200 if ready else 503,
        headers=None if ready else {"Retry-After": "5"},
    )
