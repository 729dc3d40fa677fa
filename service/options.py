"""What the gateway is told when it is built: the settings' groups it uses, and what is not a setting.

The gateway never reads `LETHE_*` variables itself: `cli.gateway` reads the settings and hands their groups
over whole (`config` only gives their types here), with a way to reach Temporal and the recall it built.
`service.gateway.GatewayServices` opens what the routes call from them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from config.groups import DatabaseSettings, GatewaySettings, LimitsSettings, TemporalSettings
from engine.config import MechanismConfig
from recall.find import Recaller
from service.relay import TemporalClient

__all__ = ["GatewayOptions"]


@dataclass(frozen=True)
class GatewayOptions:
    database: DatabaseSettings
    # Lazy: the gateway must start and answer decorate and report while Temporal is down.
    connect_temporal: Callable[[], Awaitable[TemporalClient]]
    temporal: TemporalSettings = field(default_factory=TemporalSettings)
    # The admin endpoints answer 401 until `gateway.admin_enabled` (a real admin token).
    gateway: GatewaySettings = field(default_factory=GatewaySettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    mechanism: MechanismConfig = field(default_factory=MechanismConfig)
    # Recall for new user messages (its embedder and judge built by the caller); None: recall is off.
    recaller: Recaller | None = None
    # A server span per request. `lethe gateway` and `lethe dev` turn it on only when spans are exported: the
    # instrumentation costs every call most of a millisecond even when nothing records its spans.
    tracing: bool = True
