"""The gateway built from the settings: the one place `LETHE_*` values reach the `api` layer."""

from __future__ import annotations

from temporalio.client import Client

from activities.graph import check_language
from api.app import GatewayApp, create_app
from api.options import GatewayOptions
from api.recall import Recaller
from cli.precision import settled_apart
from cli.telemetry import configure_tracing, tracing_enabled
from cli.temporal import connect_temporal
from cli.worker import build_embedder, build_judge
from config.mechanism import mechanism_config
from config.settings import Settings

__all__ = ["build_app", "gateway_options"]


def gateway_options(settings: Settings) -> GatewayOptions:
    async def connect() -> Client:
        return await connect_temporal(settings, lazy=True)

    return GatewayOptions(
        database_url=settings.database_url,
        connect_temporal=connect,
        mechanism=mechanism_config(settings),
        db_pool_size=settings.db_pool_size,
        db_pool_timeout_seconds=settings.db_pool_timeout_seconds,
        db_role=settings.db_role or None,
        temporal_task_queue=settings.temporal_task_queue,
        temporal_namespace=settings.temporal_namespace,
        temporal_ui_url=settings.temporal_ui_url,
        host=settings.host,
        admin_token=settings.admin_token.get_secret_value() if settings.admin_enabled else "",
        allow_clock_override=settings.allow_clock_override,
        max_body_bytes=settings.max_body_bytes,
        body_idle_seconds=settings.body_idle_seconds,
        tenant_rate_per_second=settings.tenant_rate_per_second,
        tenant_rate_burst=settings.tenant_rate_burst,
        tenant_max_concurrent_decorates=settings.tenant_max_concurrent_decorates,
        metrics_port=settings.metrics_port,
        metrics_token=settings.metrics_token.get_secret_value(),
        idempotency_hours=settings.idempotency_hours,
        secret_key=settings.secret_key.get_secret_value(),
        upstream_timeout_seconds=settings.upstream_timeout_seconds,
        upstream_url_header=settings.upstream_url_header,
        recaller=build_recaller(settings),
        tracing=tracing_enabled(settings),
    )


def build_recaller(settings: Settings) -> Recaller | None:
    """The gateway's recall, or None when `LETHE_RECALL` is off (decorate then is what it was without it)."""
    if not settings.recall:
        return None
    # The embedder's precision as the database records it: the worker's vectors and recall's must compare.
    embedder = build_embedder(settled_apart(settings), parallel=settings.onnx_parallel)
    return Recaller(embedder=embedder, judge=build_judge(settings, embedder), config=mechanism_config(settings),
                    deadline_seconds=settings.recall_inline_deadline_ms / 1000,
                    language=check_language(settings.search_language))


def build_app(settings: Settings) -> GatewayApp:
    configure_tracing(settings, service="lethe-gateway")
    return create_app(gateway_options(settings))
