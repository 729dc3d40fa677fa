"""A gateway with a small ceiling, so a few turns of an agent fade and bring the note ask, and the local
OpenAI-compatible upstream the agents call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from config.settings import Settings
from tests.fake_upstream import FakeUpstream, serve_fake_upstream
from tests.support import free_port, serve_gateway

INTEGRATIONS_CEILING = 4000


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeUpstream]:
    with serve_fake_upstream() as fake:
        yield fake


@pytest.fixture
def upstream(upstream_server: FakeUpstream) -> FakeUpstream:
    upstream_server.reset()
    return upstream_server


@pytest.fixture(scope="session")
async def small_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    async with serve_gateway(settings.replace(ceiling_tokens=INTEGRATIONS_CEILING, port=free_port())) as url:
        yield url


@pytest.fixture(scope="session")
async def recall_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    """The same small ceiling with recall on (the session's settings turn it off), for the recall block."""
    mine = settings.replace(recall=True, ceiling_tokens=INTEGRATIONS_CEILING, port=free_port(),
                            recall_inline_deadline_ms=20_000)
    async with serve_gateway(mine) as url:
        yield url
