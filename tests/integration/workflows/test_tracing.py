"""One trace from a decorate to the lane's jobs it caused: the gateway's request span and the job's span share
a trace id, carried by the outbox event across the relay and the workflow."""

from __future__ import annotations

import httpx
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from store.db import Database
from tests.integration.workflows.lane_support import http_tenant, unprocessed
from tests.support import eventually


async def test_decorate_and_its_jobs_share_one_trace(http: httpx.AsyncClient, db: Database) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # once per process; the instrumentation's proxies pick it up
    tenant_id, key = await http_tenant(http)
    auth = {"Authorization": f"Bearer {key}"}
    for text in ("Plan the launch.", "Who owns QA?"):
        response = await http.post("/v1/memories/traced/decorate", headers=auth,
                                   json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]})
        assert response.status_code == 200

    async def job_spans() -> list[object]:
        if await unprocessed(db, tenant_id):
            return []
        return [s for s in exporter.get_finished_spans()
                if s.name == "lane.score_boundaries" and (s.attributes or {}).get("tenant_id") == tenant_id]

    jobs = await eventually(job_spans)
    requests = {s.context.trace_id for s in exporter.get_finished_spans()
                if s.kind == trace.SpanKind.SERVER and "decorate" in s.name}
    assert requests and {s.context.trace_id for s in jobs} <= requests  # type: ignore[attr-defined]
