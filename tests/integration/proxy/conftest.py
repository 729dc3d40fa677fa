"""The proxy's own gateway (small ceiling, short upstream timeout) and the local OpenAI-compatible upstream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from openai import AsyncOpenAI

from config.settings import Settings
from tests.fake_upstream import FakeUpstream, serve_fake_upstream
from tests.support import free_port, serve_gateway

PROXY_CEILING = 8000
UPSTREAM_TIMEOUT = 1.5


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeUpstream]:
    with serve_fake_upstream() as fake:
        yield fake


@pytest.fixture
def upstream(upstream_server: FakeUpstream) -> FakeUpstream:
    upstream_server.reset()
    return upstream_server


@pytest.fixture(scope="session")
async def proxy_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    # Recall on (the session's settings turn it off): the agents' requests, recall blocks and all, are held to
    # the ceiling by the provider's own count.
    proxied = settings.replace(
        recall=True, ceiling_tokens=PROXY_CEILING, port=free_port(),
        upstream_timeout_seconds=UPSTREAM_TIMEOUT,
        secret_key=settings.gateway.secret_key.__class__("test-secret-one,test-secret-old"))
    async with serve_gateway(proxied) as url:
        yield url


@pytest.fixture
def agent_client(proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str]
                 ) -> Callable[..., AsyncOpenAI]:
    """An OpenAI client pointed at the gateway for one memory, the upstream named in headers."""

    def make(memory_id: str, *, max_retries: int = 0, **headers: str) -> AsyncOpenAI:
        return AsyncOpenAI(base_url=f"{proxy_gateway}/v1", api_key=tenant[1], max_retries=max_retries,
                           default_headers={"X-Lethe-Memory": memory_id,
                                            "X-Lethe-Upstream-Base-URL": upstream.base_url,
                                            "X-Lethe-Upstream-Key": "sk-upstream-secret-0123456789", **headers})

    return make
