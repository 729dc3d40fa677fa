"""A gateway with a small ceiling, so conversations fade and their note asks come within a few dozen turns."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from config.settings import Settings
from tests.support import free_port, serve_gateway

GRAPH_CEILING = 8000


@pytest.fixture(scope="session")
async def graph_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    small = settings.replace(ceiling_tokens=GRAPH_CEILING, port=free_port())
    async with serve_gateway(small) as url:
        yield url


@pytest.fixture
async def graph_http(graph_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=graph_gateway, timeout=60) as client:
        yield client
