"""The Temporal worker: the memory workflow and the lane's activities, plus a small health endpoint."""

from __future__ import annotations

import asyncio
import logging

import uvicorn
from fastapi import FastAPI
from temporalio.client import Client
from temporalio.worker import Worker

from activities.lane import LaneActivities
from api.routes import health
from config.settings import Settings
from config.temporal import connect_temporal
from store.db import Database
from workflows.memory import MemoryWorkflow

__all__ = ["build_worker", "run_worker"]

log = logging.getLogger(__name__)


def build_worker(client: Client, db: Database, *, task_queue: str) -> Worker:
    lane = LaneActivities(db)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[MemoryWorkflow],
        activities=[lane.fetch_events, lane.record_event],
    )


def _health_app(db: Database, client: Client) -> FastAPI:
    app = FastAPI(title="Lethe worker health", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.db, app.state.temporal = db, client
    app.include_router(health.router)
    return app


async def run_worker(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    db = Database(settings.database_url, pool_size=settings.db_pool_size)
    client = await connect_temporal(settings)
    worker = build_worker(client, db, task_queue=settings.temporal_task_queue)
    tasks = [asyncio.create_task(worker.run(), name="worker")]
    server = None
    if settings.worker_health_port:
        config = uvicorn.Config(
            _health_app(db, client), host=settings.host, port=settings.worker_health_port,
            log_level="warning", lifespan="off",
        )
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        tasks.append(asyncio.create_task(server.serve(), name="worker-health"))
    log.info("worker started", extra={"task_queue": settings.temporal_task_queue})
    try:
        if stop is None:
            await asyncio.gather(*tasks)
        else:
            await stop.wait()
    finally:
        if server is not None:
            server.should_exit = True
        await worker.shutdown()
        await asyncio.gather(*tasks, return_exceptions=True)
        await db.dispose()
