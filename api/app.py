"""The gateway application: joins the routers, owns the database pool, the Temporal client and the relay."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI

from api.body import BodyLimit
from api.context import HotPath
from api.errors import install_error_handlers
from api.housekeeping import Housekeeping
from api.limits import TenantLimits
from api.openapi import install_openapi
from api.proxy.upstreams import ProxyContext
from api.recall import build_recaller
from api.relay import OutboxRelay
from api.routes import admin, health, memories, proxy, upstreams
from api.routes.inspect import install_inspector
from api.routes.metrics import install_metrics, serve_metrics
from api.tenant_keys import TenantKeys
from config.mechanism import mechanism_config
from config.settings import Settings
from config.telemetry import configure_tracing, instrument_app
from config.temporal import connect_temporal
from providers.factory import make_token_counter
from providers.upstream import UpstreamPool
from store.db import Database
from store.secrets import SecretBox

__all__ = ["create_app"]


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings.database_url, pool_size=settings.db_pool_size, role=settings.db_role or None,
                      strict=True)
        # Lazy: the gateway answers decorate and report even while Temporal is down.
        temporal = await connect_temporal(settings, lazy=True)
        relay = OutboxRelay(db, temporal, task_queue=settings.temporal_task_queue)
        app.state.settings, app.state.db, app.state.temporal, app.state.relay = settings, db, temporal, relay
        config = mechanism_config(settings)
        app.state.hot_path = HotPath(db=db, counter=make_token_counter(), config=config,
                                     recaller=build_recaller(settings, config))
        app.state.tenant_keys = TenantKeys(db)
        app.state.proxy = ProxyContext(db=db, pool=UpstreamPool(timeout=settings.upstream_timeout_seconds),
                                       box=SecretBox(settings.secret_key.get_secret_value()),
                                       allow_url_header=settings.upstream_url_header)
        app.state.limits = TenantLimits(
            rate=settings.tenant_rate_per_second,
            burst=settings.tenant_rate_burst or math.ceil(2 * settings.tenant_rate_per_second),
            max_decorates=settings.tenant_max_concurrent_decorates)
        housekeeping = Housekeeping(db, keep=timedelta(hours=settings.idempotency_hours))
        stop_metrics = serve_metrics(settings.host, settings.metrics_port) if settings.metrics_port else None
        relay.start()
        housekeeping.start()
        try:
            yield
        finally:
            if stop_metrics is not None:
                stop_metrics()
            await housekeeping.stop()
            await relay.stop()
            await app.state.proxy.pool.close()
            await db.dispose()

    configure_tracing(settings, service="lethe-gateway")
    app = FastAPI(title="Lethe", version="0.1.0", lifespan=lifespan)
    instrument_app(app)
    install_error_handlers(app)
    install_openapi(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, idle_seconds=settings.body_idle_seconds)
    install_metrics(app, own_port=bool(settings.metrics_port))
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(memories.router)
    app.include_router(upstreams.router)
    app.include_router(proxy.router)
    install_inspector(app)
    return app
