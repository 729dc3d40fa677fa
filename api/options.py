"""What the gateway is told when it is built: plain values, read from the settings by the `lethe` command.

The gateway never reads `LETHE_*` variables itself (DESIGN's layers: `api` imports engine, store and
providers only); `cli.gateway` turns the settings into these options and a way to reach Temporal.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from api.recall import Recaller
from api.relay import TemporalClient
from engine.config import MechanismConfig

__all__ = ["GatewayOptions"]


@dataclass(frozen=True)
class GatewayOptions:
    database_url: str
    # Lazy: the gateway must start and answer decorate and report while Temporal is down.
    connect_temporal: Callable[[], Awaitable[TemporalClient]]
    mechanism: MechanismConfig = field(default_factory=MechanismConfig)
    db_pool_size: int = 10
    db_pool_timeout_seconds: float = 10.0
    db_role: str | None = None
    temporal_task_queue: str = "lethe-memory"
    temporal_namespace: str = "default"
    temporal_ui_url: str = ""
    host: str = "127.0.0.1"
    admin_token: str = ""  # empty: the admin endpoints answer 401
    allow_clock_override: bool = False
    max_body_bytes: int = 8 * 1024 * 1024
    body_idle_seconds: float = 10.0
    tenant_rate_per_second: float = 0.0
    tenant_rate_burst: int = 0
    tenant_max_concurrent_decorates: int = 0
    metrics_port: int = 0
    metrics_token: str = ""
    idempotency_hours: float = 24.0
    secret_key: str = ""
    upstream_timeout_seconds: float = 600.0
    upstream_url_header: bool = True
    # Recall for new user messages (its embedder and judge built by the caller); None: recall is off.
    recaller: Recaller | None = None
    # A server span per request. `lethe gateway` and `lethe dev` turn it on only when spans are exported: the
    # instrumentation costs every call most of a millisecond even when nothing records its spans.
    tracing: bool = True

    @property
    def admin_enabled(self) -> bool:
        return bool(self.admin_token)
