"""Prometheus metrics on `/metrics`, for the chart's optional ServiceMonitor: request counts and latencies per
route (prometheus_client), and everything of `service.metrics` (OpenTelemetry, whose Prometheus reader writes
into the same default registry). The worker serves the same route on its health port (`install_metrics_route`).
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest, start_http_server
from pydantic import SecretStr
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import install_error_handlers
from contracts.errors import Unauthorized

router = APIRouter(tags=["health"])

REQUESTS = Counter("lethe_http_requests_total", "HTTP requests answered", ["route", "method", "status"])
LATENCY = Histogram(
    "lethe_http_request_seconds", "Server-side time to answer", ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


@router.get("/metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    state = request.app.state
    # The worker's health app names its token; the gateway's is in its options (LETHE_METRICS_TOKEN either way).
    secret = getattr(state, "metrics_token", None)
    token = (secret if secret is not None else state.options.gateway.metrics_token).get_secret_value()
    if token:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise Unauthorized("/metrics needs `Authorization: Bearer <LETHE_METRICS_TOKEN>`")
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def install_metrics(app: FastAPI, *, own_port: bool) -> None:
    """Measure every request; serve /metrics on the gateway's port unless it has a port of its own."""
    app.add_middleware(_Measure)
    if not own_port:
        app.include_router(router)


def install_metrics_route(app: FastAPI, *, token: SecretStr) -> None:
    """/metrics on another app (the worker's health port), behind the same token rule as the gateway's."""
    app.state.metrics_token = token
    install_error_handlers(app)  # a wrong token is answered 401 as on the gateway, not 500
    app.include_router(router)


def serve_metrics(host: str, port: int) -> Callable[[], None]:
    """/metrics on its own port (a thread of prometheus_client); returns how to stop it."""
    server, thread = start_http_server(port, addr=host)

    def stop() -> None:
        server.shutdown()
        thread.join(timeout=5)

    return stop


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
