"""Prometheus metrics: request counts and latencies per route, for the chart's optional ServiceMonitor."""

from __future__ import annotations

import time

from fastapi import APIRouter, FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
    app.add_middleware(_Measure)
    app.include_router(router)


class _Measure:
    """Counts and times every HTTP request, and tells the caller the server-side time (`Server-Timing`).

    Plain ASGI rather than `BaseHTTPMiddleware`, which would pass every answer (a decorate's is the whole
    request) through an extra stream and task."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def timed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # The time to the answer's start, for clients and benchmarks that want it without the network.
                elapsed = time.perf_counter() - started
                message["headers"] = [*message.get("headers", []),
                                      (b"server-timing", f"app;dur={elapsed * 1000:.2f}".encode())]
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        finally:
            # The route template, not the raw path, so memory ids never become label values.
            route = getattr(scope.get("route"), "path", "unmatched")
            LATENCY.labels(route, scope["method"]).observe(time.perf_counter() - started)
            REQUESTS.labels(route, scope["method"], str(status)).inc()
