"""The gateway application: joins the routers and opens, for its lifetime, what they call (`service.gateway`)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

from api.body import BodyLimit
from api.errors import install_error_handlers
from api.gc_pauses import freeze_startup, watch_gc
from api.limits import TenantLimits
from api.openapi import install_openapi
from api.routes import admin, ceilings, facts, health, jobs, memories, proxy, upstreams, users
from api.routes.inspect import install_inspector
from api.routes.metrics import install_metrics, serve_metrics
from contracts.version import VERSION
from service.gateway import GatewayServices
from service.options import GatewayOptions

__all__ = ["GatewayApp", "create_app"]

# What `create_app` builds, named here so the layers above never import FastAPI themselves.
GatewayApp = FastAPI


def create_app(options: GatewayOptions) -> FastAPI:
    """The gateway; tracing, when wanted, is configured by the caller before (`cli.gateway`)."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = await GatewayServices.open(options)
        gateway, limits = options.gateway, options.limits
        app.state.services, app.state.options = services, options
        # What the health probe reads (api/routes/health.py, shared with the worker's): decorate and report need
        # Postgres only, so a Temporal outage does not take the gateway out of its Service.
        app.state.db, app.state.temporal = services.db, services.temporal
        app.state.ready_needs = ("postgres",)
        app.state.limits = TenantLimits(
            rate=limits.tenant_rate_per_second,
            burst=limits.tenant_rate_burst or math.ceil(2 * limits.tenant_rate_per_second),
            max_decorates=limits.tenant_max_concurrent_decorates)
        stop_metrics = serve_metrics(gateway.host, gateway.metrics_port) if gateway.metrics_port else None
        services.start()
        freeze_startup()
        stop_watching_gc = watch_gc()
        try:
            yield
        finally:
            stop_watching_gc()
            if stop_metrics is not None:
                stop_metrics()
            await services.close()

    app = FastAPI(title="Lethe", version=VERSION, lifespan=lifespan)
    if options.tracing:
        # A server span per request; decorate's span is the root the lane's jobs join. Not one span per ASGI
        # message: a proxied stream would make one per chunk.
        FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,readyz,metrics",
                                           exclude_spans=["receive", "send"])
    install_error_handlers(app)
    install_openapi(app)
    limits = options.limits
    app.add_middleware(BodyLimit, max_bytes=limits.max_body_bytes, idle_seconds=limits.body_idle_seconds)
    install_metrics(app, own_port=bool(options.gateway.metrics_port))
    app.include_router(health.router)
    app.include_router(admin.router)
    app.include_router(memories.router)
    app.include_router(facts.router)
    app.include_router(users.router)
    app.include_router(upstreams.router)
    app.include_router(ceilings.router)
    app.include_router(jobs.router)
    app.include_router(proxy.router)
    install_inspector(app)
    return app
