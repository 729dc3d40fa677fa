"""A second gateway with a small ceiling (8000 tokens), so whole conversations fade, seal and forget quickly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from config.settings import Settings
from tests.support import free_port, serve_gateway

SMALL_CEILING = 8000


@pytest.fixture(scope="session")
async def small_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    small = settings.replace(ceiling_tokens=SMALL_CEILING, port=free_port())
    async with serve_gateway(small) as url:
        yield url


@pytest.fixture
async def small_http(small_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=small_gateway, timeout=60) as client:
        yield client
