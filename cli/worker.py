"""The Temporal worker: the memory workflow and the lane's activities, plus a small health endpoint."""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import timedelta
from typing import Any

import uvicorn
from temporalio.client import Client
from temporalio.worker import Worker

from activities.erased import ErasedMeanwhile
from activities.graph import GraphActivities, check_language
from activities.lane import LaneActivities, NoteAskPolicy
from activities.recall import RecallActivities
from activities.tenant_scope import TenantScope
from activities.timing import ActivityTiming
from api.gc_pauses import freeze_startup
from api.routes import health
from api.routes.metrics import install_metrics_route
from cli.precision import local_precision, settled
from cli.telemetry import configure_metrics, configure_tracing
from cli.temporal import connect_temporal
from config.groups import ModelSettings
from config.mechanism import mechanism_config
from config.settings import Settings
from contracts import lane_names
from providers.embedder import Embedder
from providers.factory import make_embedder, make_judge
from providers.judge import Judge
from recall.config import RecallConfig
from service.metrics import ACTIVITY_DURATION, LaneGauges
from store.db import Database
from workflows.memory import MemoryWorkflow

__all__ = ["build_embedder", "build_judge", "build_worker", "run_worker", "serve_worker"]

log = logging.getLogger(__name__)


def _openai(settings: ModelSettings) -> dict[str, Any]:
    api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return {"openai_base_url": settings.openai_base_url, "openai_api_key": api_key,
            "openai_timeout_seconds": settings.openai_timeout_seconds,
            "openai_max_retries": settings.openai_max_retries}


def build_embedder(settings: ModelSettings, *, parallel: int = 1) -> Embedder:
    """The embedder the models' settings name; `parallel`: texts of one call the embedded model runs at once (the
    gateway's recall passes `onnx_parallel`). Its precision as settled for the database (`settled`), else the
    setting, `auto` read as this machine's preference."""
    return make_embedder(kind=settings.embedder, onnx_threads=settings.onnx_threads, onnx_parallel=parallel,
                         precision=local_precision(settings), model_cache=settings.cache,
                         openai_model=settings.openai_embedding_model, **_openai(settings))


def build_judge(settings: ModelSettings, embedder: Embedder | None = None) -> Judge:
    """The judge the lane's jobs use, on the embedder the models' settings name."""
    return make_judge(kind=settings.judge, embedder=embedder or build_embedder(settings),
                      openai_model=settings.openai_judge_model, **_openai(settings))


def build_worker(
    client: Client, db: Database, *, task_queue: str, settings: Settings | None = None, judge: Judge | None = None
) -> Worker:
    settings = settings or Settings(_env_file=None)  # type: ignore[call-arg]
    embedder = build_embedder(settings.models)
    judge = judge or build_judge(settings.models, embedder)
    language = check_language(settings.models.search_language)
    graph = GraphActivities(db, judge, embedder, language=language)
    recall = RecallActivities(db, judge, embedder, config=RecallConfig(
        mechanism=mechanism_config(settings), language=language))
    lane = LaneActivities(
        db,
        judge=judge,
        config=mechanism_config(settings),
        note_ask=NoteAskPolicy(calls=settings.mechanism.note_ask_pending_calls,
                               minutes=settings.mechanism.note_ask_pending_minutes),
    )
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[MemoryWorkflow],
        activities=[*lane.all(), *graph.all(), *recall.all()],
        interceptors=[TenantScope(), ErasedMeanwhile(db), ActivityTiming(ACTIVITY_DURATION)],
        # Without it the SDK cancels running activities at once on shutdown: a rolling update would throw away
        # a judge's half-done batch and run it again elsewhere.
        graceful_shutdown_timeout=timedelta(seconds=settings.worker.graceful_shutdown_seconds),
    )


async def serve_worker(settings: Settings, *, judge: Judge | None = None) -> None:
    """`lethe worker`: run until SIGTERM (Kubernetes, `lethe dev`) or Ctrl-C, then let running activities finish
    (for at most LETHE_WORKER_GRACEFUL_SHUTDOWN_SECONDS) and leave."""
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    await run_worker(settings, stop=stop, judge=judge)


async def run_worker(settings: Settings, *, stop: asyncio.Event | None = None, judge: Judge | None = None) -> None:
    configure_tracing(settings.observability, service="lethe-worker")
    configure_metrics(settings.observability, service="lethe-worker")
    # No ping before each checkout: a ping is a round trip, and an activity that meets a connection Postgres
    # dropped fails, the pool is renewed, and Temporal runs it again.
    database = settings.database
    db = Database(database.url, pool_size=database.pool_size, role=database.role or None,
                  strict=True, pre_ping=False)
    # The embedder's precision, as the database records it.
    settings = settings.model_copy(update={"models": await settled(settings.models, db)})
    client = await connect_temporal(settings.temporal)
    worker = build_worker(client, db, task_queue=settings.temporal.task_queue, settings=settings, judge=judge)
    freeze_startup()  # the libraries' objects out of every later collection's walk (api/gc_pauses.py)
    tasks = [asyncio.create_task(worker.run(), name="worker")]
    if settings.worker.health_port or settings.observability.otlp_endpoint:  # else nobody would read them
        gauges = LaneGauges(db, note_asks_pending=lambda: _note_asks_pending(client))
        tasks.append(asyncio.create_task(gauges.run_beside(tasks[0]), name="worker-lane-gauges"))
    server = None
    if settings.worker.health_port:
        app = health.health_app(db, client)
        install_metrics_route(app, token=settings.gateway.metrics_token)  # same token rule as the gateway's
        config = uvicorn.Config(
            app, host=settings.gateway.host, port=settings.worker.health_port, log_level="warning", lifespan="off",
        )
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        tasks.append(asyncio.create_task(server.serve(), name="worker-health"))
    log.info("worker started", extra={"task_queue": settings.temporal.task_queue})
    try:
        if stop is None:
            await asyncio.gather(*tasks)
        else:
            await stop.wait()
    finally:
        log.info("worker stopping: running activities may finish",
                 extra={"grace_seconds": settings.worker.graceful_shutdown_seconds})
        await worker.shutdown()
        if server is not None:  # probes answer until the activities are done
            server.should_exit = True
        await asyncio.gather(*tasks, return_exceptions=True)
        await db.dispose()


async def _note_asks_pending(client: Client) -> int:
    """Memories the operators' filter finds (docs/operating.md): Temporal's visibility counts them, not Postgres."""
    counted = await client.count_workflows(f"{lane_names.NOTE_ASK_PENDING.name} = true")
    return counted.count
