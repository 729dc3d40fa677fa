"""A gateway for managing a memory's facts: recall on (searching a memory is recall's search) and a small ceiling,
so a conversation seals episodes with facts within a few dozen turns."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from config.settings import Settings
from tests.support import free_port, serve_gateway

FACTS_CEILING = 8000


@pytest.fixture(scope="session")
async def facts_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    mine = settings.replace(recall=True, ceiling_tokens=FACTS_CEILING, port=free_port(),
                            recall_inline_deadline_ms=20_000)
    async with serve_gateway(mine) as url:
        yield url


@pytest.fixture
async def facts_http(facts_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=facts_gateway, timeout=60) as client:
        yield client
