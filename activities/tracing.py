"""Jobs join the trace of the call that caused them: the event carries that call's W3C `traceparent`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from contracts.lane_types import EventRef

__all__ = ["job_span"]

_tracer = trace.get_tracer("lethe.lane")


@contextmanager
def job_span(name: str, tenant_id: str, event: EventRef | None = None) -> Iterator[None]:
    traceparent = event.traceparent if event else ""
    parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent}) if traceparent else None
    attributes: dict[str, str | int] = {"tenant_id": tenant_id, "seq": event.seq if event else 0}
    with _tracer.start_as_current_span(f"lane.{name}", context=parent, attributes=attributes):
        yield
