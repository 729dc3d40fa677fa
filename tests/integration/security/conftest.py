"""A second gateway with the protective settings on: tight per-tenant limits, /metrics on its own port behind
a token, a short body idle time. The session gateway keeps them off, so other tests are not throttled."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from pydantic import SecretStr

from config.settings import Settings
from tests.support import free_port, serve_gateway

METRICS_TOKEN = "metrics-token-for-tests"


@dataclass(frozen=True)
class Strict:
    url: str
    settings: Settings


@pytest.fixture(scope="session")
async def strict(settings: Settings, worker: None) -> AsyncIterator[Strict]:
    own = settings.replace(
        port=free_port(), body_idle_seconds=1.0, tenant_rate_per_second=5.0, tenant_rate_burst=10,
        tenant_max_concurrent_decorates=2, metrics_port=free_port(),
        metrics_token=SecretStr(METRICS_TOKEN))
    async with serve_gateway(own) as url:
        yield Strict(url, own)


# The proxy's gateway (it has a secret key, so tenants' upstreams can be stored) and its local upstream, for
# the proxy's cross-tenant test.
from tests.integration.proxy.conftest import proxy_gateway, upstream, upstream_server  # noqa: E402, F401
