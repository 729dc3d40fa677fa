"""The gateway application: joins the routers, owns the database pool, the Temporal client and the relay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI

from api.context import HotPath
from api.errors import install_error_handlers
from api.housekeeping import Housekeeping
from api.relay import OutboxRelay
from api.routes import admin, health, memories
from api.routes.inspect import install_inspector
from api.routes.metrics import install_metrics
from api.tenant_keys import TenantKeys
from config.mechanism import mechanism_config
from config.settings import Settings
from config.telemetry import configure_tracing, instrument_app
from config.temporal import connect_temporal
from providers.factory import make_embedder, make_judge, make_token_counter
from store.db import Database

__all__ = ["create_app"]


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings.database_url, pool_size=settings.db_pool_size)
        # Lazy: the gateway answers decorate and report even while Temporal is down.
        temporal = await connect_temporal(settings, lazy=True)
        relay = OutboxRelay(db, temporal, task_queue=settings.temporal_task_queue)
        app.state.settings, app.state.db, app.state.temporal, app.state.relay = settings, db, temporal, relay
        judge = make_judge(kind="local", embedder=make_embedder(kind="local", onnx_threads=settings.onnx_threads))
        app.state.hot_path = HotPath(db=db, counter=make_token_counter(), config=mechanism_config(settings),
                                     judge=judge)
        app.state.tenant_keys = TenantKeys(db)
        housekeeping = Housekeeping(db, keep=timedelta(hours=settings.idempotency_hours))
        relay.start()
        housekeeping.start()
        try:
            yield
        finally:
            await housekeeping.stop()
            await relay.stop()
            await db.dispose()

    configure_tracing(settings, service="lethe-gateway")
    app = FastAPI(title="Lethe", version="0.1.0", lifespan=lifespan)
    instrument_app(app)
    install_error_handlers(app)
    install_metrics(app)
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(memories.router)
    install_inspector(app)
    return app
