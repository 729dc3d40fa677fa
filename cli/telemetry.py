"""OpenTelemetry: one trace from a decorate, through the relay's signal, to the lane's jobs it caused.

Off by default: spans are only exported when `LETHE_OTLP_ENDPOINT` (OTLP/HTTP) or `LETHE_TRACE_CONSOLE` is set.
The Temporal tracing interceptor is always installed; without a provider it costs next to nothing.
"""

from __future__ import annotations

import logging

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from temporalio.contrib.opentelemetry import TracingInterceptor

from config.groups import ObservabilitySettings

__all__ = ["configure_tracing", "temporal_interceptors", "tracing_enabled"]

log = logging.getLogger(__name__)
_installed: list[TracerProvider] = []


def tracing_enabled(settings: ObservabilitySettings) -> bool:
    """Whether spans are exported at all (`LETHE_OTLP_ENDPOINT` or `LETHE_TRACE_CONSOLE`)."""
    return bool(settings.otlp_endpoint or settings.trace_console)


def configure_tracing(settings: ObservabilitySettings, *, service: str) -> TracerProvider | None:
    """Install the process's tracer provider when export is configured; None leaves tracing off."""
    if not tracing_enabled(settings):
        return None
    if _installed:  # `lethe dev` runs the gateway and the worker in one process: one provider for both
        return _installed[0]
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = settings.otlp_endpoint.rstrip("/")
        if not endpoint.endswith("/v1/traces"):
            endpoint += "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    if settings.trace_console:
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
    _installed.append(provider)
    log.info("tracing on", extra={"service": service, "otlp": bool(settings.otlp_endpoint)})
    return provider


def temporal_interceptors() -> list[TracingInterceptor]:
    """Client and worker interceptor: starts, signals, workflows and activities carry the trace context."""
    return [TracingInterceptor()]

