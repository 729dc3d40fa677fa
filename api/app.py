"""The gateway application: joins the routers, owns the database pool, the Temporal client and the relay."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

from api.body import BodyLimit
from api.context import HotPath
from api.errors import install_error_handlers
from api.gc_pauses import freeze_startup, watch_gc
from api.housekeeping import Housekeeping
from api.limits import TenantLimits
from api.openapi import install_openapi
from api.options import GatewayOptions
from api.proxy.upstreams import ProxyContext
from api.relay import OutboxRelay
from api.routes import admin, health, memories, proxy, upstreams
from api.routes.inspect import install_inspector
from api.routes.metrics import install_metrics, serve_metrics
from api.tenant_keys import TenantKeys
from providers.factory import make_token_counter
from providers.upstream import UpstreamPool
from store.db import Database
from store.secrets import SecretBox

__all__ = ["GatewayApp", "create_app"]

# What `create_app` builds, named here so the layers above never import FastAPI themselves.
GatewayApp = FastAPI


def create_app(options: GatewayOptions) -> FastAPI:
    """The gateway; tracing, when wanted, is configured by the caller before (`cli.gateway`)."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(options.database_url, pool_size=options.db_pool_size, role=options.db_role, strict=True,
                      pool_timeout=options.db_pool_timeout_seconds)
        temporal = await options.connect_temporal()
        relay = OutboxRelay(db, temporal, task_queue=options.temporal_task_queue)
        app.state.options, app.state.db, app.state.temporal, app.state.relay = options, db, temporal, relay
        app.state.hot_path = HotPath(db=db, counter=make_token_counter(), config=options.mechanism,
                                     recaller=options.recaller)
        app.state.tenant_keys = TenantKeys(db)
        app.state.proxy = ProxyContext(db=db, pool=UpstreamPool(timeout=options.upstream_timeout_seconds),
                                       box=SecretBox(options.secret_key),
                                       allow_url_header=options.upstream_url_header)
        app.state.limits = TenantLimits(
            rate=options.tenant_rate_per_second,
            burst=options.tenant_rate_burst or math.ceil(2 * options.tenant_rate_per_second),
            max_decorates=options.tenant_max_concurrent_decorates)
        housekeeping = Housekeeping(db, keep=timedelta(hours=options.idempotency_hours))
        stop_metrics = serve_metrics(options.host, options.metrics_port) if options.metrics_port else None
        relay.start()
        housekeeping.start()
        freeze_startup()
        stop_watching_gc = watch_gc()
        try:
            yield
        finally:
            stop_watching_gc()
            if stop_metrics is not None:
                stop_metrics()
            await housekeeping.stop()
            await relay.stop()
            await app.state.proxy.pool.close()
            await db.dispose()

    app = FastAPI(title="Lethe", version="0.1.0", lifespan=lifespan)
    if options.tracing:
        # A server span per request; decorate's span is the root the lane's jobs join. Not one span per ASGI
        # message: a proxied stream would make one per chunk.
        FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,readyz,metrics",
                                           exclude_spans=["receive", "send"])
    install_error_handlers(app)
    install_openapi(app)
    app.add_middleware(BodyLimit, max_bytes=options.max_body_bytes, idle_seconds=options.body_idle_seconds)
    install_metrics(app, own_port=bool(options.metrics_port))
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(memories.router)
    app.include_router(upstreams.router)
    app.include_router(proxy.router)
    install_inspector(app)
    return app
