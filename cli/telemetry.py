"""OpenTelemetry: one trace from a decorate, through the relay's signal, to the lane's jobs it caused; and the
metrics of `service.metrics`.

Traces are off by default: spans are only exported when `LETHE_OTLP_ENDPOINT` (OTLP/HTTP) or
`LETHE_TRACE_CONSOLE` is set. The Temporal tracing interceptor is always installed; without a provider it costs
next to nothing. Metrics are always on: Prometheus text on `/metrics`, and pushed to `LETHE_OTLP_ENDPOINT` too
when that is set.
"""

from __future__ import annotations

import logging

from opentelemetry import metrics, trace
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from temporalio.contrib.opentelemetry import TracingInterceptor

from config.groups import ObservabilitySettings

__all__ = ["configure_metrics", "configure_tracing", "otlp_url", "temporal_interceptors", "tracing_enabled"]

log = logging.getLogger(__name__)
_installed: list[TracerProvider] = []
_meters: list[MeterProvider] = []


def otlp_url(endpoint: str, signal: str) -> str:
    """The collector's URL for one signal (`traces`, `metrics`), whether or not the setting names a path."""
    base = endpoint.rstrip("/")
    for known in ("/v1/traces", "/v1/metrics"):
        base = base.removesuffix(known)
    return f"{base}/v1/{signal}"


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

        endpoint = otlp_url(settings.otlp_endpoint, "traces")
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    if settings.trace_console:
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
    _installed.append(provider)
    log.info("tracing on", extra={"service": service, "otlp": bool(settings.otlp_endpoint)})
    return provider


def configure_metrics(settings: ObservabilitySettings, *, service: str) -> MeterProvider:
    """Install the process's meter provider: read by Prometheus on `/metrics` (the Prometheus reader writes into
    prometheus_client's default registry, beside the gateway's HTTP metrics), pushed over OTLP when configured."""
    if _meters:  # one provider for the gateway and the worker sharing a process (`lethe dev`, the tests)
        return _meters[0]
    readers: list[MetricReader] = [PrometheusMetricReader()]
    if settings.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        endpoint = otlp_url(settings.otlp_endpoint, "metrics")
        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint)))
    provider = MeterProvider(resource=Resource.create({"service.name": service}), metric_readers=readers)
    metrics.set_meter_provider(provider)
    _meters.append(provider)
    return provider


def temporal_interceptors() -> list[TracingInterceptor]:
    """Client and worker interceptor: starts, signals, workflows and activities carry the trace context."""
    return [TracingInterceptor()]

