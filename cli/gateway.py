"""The gateway built from the settings: the one place `LETHE_*` values reach the `api` layer."""

from __future__ import annotations

from temporalio.client import Client

from activities.graph import check_language
from api.app import GatewayApp, create_app
from cli.precision import settled_apart
from cli.telemetry import configure_metrics, configure_tracing, tracing_enabled
from cli.temporal import connect_temporal
from cli.worker import build_embedder, build_judge
from config.mechanism import mechanism_config
from config.settings import Settings
from engine.recall.floor import ScoreFloor
from recall.config import RecallConfig
from recall.find import Recaller
from service.options import GatewayOptions

__all__ = ["build_app", "gateway_options"]


def gateway_options(settings: Settings) -> GatewayOptions:
    async def connect() -> Client:
        return await connect_temporal(settings.temporal, lazy=True)

    return GatewayOptions(
        database=settings.database, connect_temporal=connect, temporal=settings.temporal, gateway=settings.gateway,
        limits=settings.limits, mechanism=mechanism_config(settings), recaller=build_recaller(settings),
        tracing=tracing_enabled(settings.observability),
    )


def build_recaller(settings: Settings) -> Recaller | None:
    """The gateway's recall, or None when `LETHE_RECALL` is off (decorate then is what it was without it)."""
    if not settings.recall.enabled:
        return None
    # The embedder's precision as the database records it: the worker's vectors and recall's must compare.
    models = settled_apart(settings.models, settings.database)
    embedder = build_embedder(models, parallel=models.onnx_parallel)
    config = RecallConfig(mechanism=mechanism_config(settings),
                          deadline_seconds=settings.recall.inline_deadline_ms / 1000,
                          floor=ScoreFloor(relative=settings.recall.score_floor,
                                           touch=settings.recall.touch_similarity,
                                           stand_out=settings.recall.stand_out_similarity,
                                           lead=settings.recall.stand_out_lead),
                          language=check_language(models.search_language))
    return Recaller(embedder=embedder, judge=build_judge(models, embedder), config=config)


def build_app(settings: Settings) -> GatewayApp:
    configure_tracing(settings.observability, service="lethe-gateway")
    configure_metrics(settings.observability, service="lethe-gateway")
    return create_app(gateway_options(settings))
