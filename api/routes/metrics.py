"""Prometheus metrics: request counts and latencies per route, for the chart's optional ServiceMonitor."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

router = APIRouter(tags=["health"])

REQUESTS = Counter("lethe_http_requests_total", "HTTP requests answered", ["route", "method", "status"])
LATENCY = Histogram(
    "lethe_http_request_seconds", "Server-side time to answer", ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def install_metrics(app: FastAPI) -> None:
    @app.middleware("http")
    async def measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        # The route template, not the raw path, so memory ids never become label values.
        route = getattr(request.scope.get("route"), "path", "unmatched")
        elapsed = time.perf_counter() - started
        LATENCY.labels(route, request.method).observe(elapsed)
        REQUESTS.labels(route, request.method, str(response.status_code)).inc()
        # Server-side time, for clients and benchmarks that want it without the network.
        response.headers["Server-Timing"] = f"app;dur={elapsed * 1000:.2f}"
        return response

    app.include_router(router)
