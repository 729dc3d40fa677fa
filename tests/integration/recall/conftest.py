"""A gateway for recall tests, recall on (the session's settings turn it off): a small ceiling, so
conversations fade within a few dozen turns; an inline deadline long enough that a loaded test machine still
finishes the walk (the deadline itself is tested on its own); and the walk keeping `tangential` facts, so a
block holds facts the turn then does not use."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from config.settings import Settings
from tests.support import free_port, serve_gateway

RECALL_CEILING = 4000


@pytest.fixture(scope="session")
async def recall_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    mine = settings.replace(recall=True, ceiling_tokens=RECALL_CEILING, port=free_port(),
                            recall_inline_deadline_ms=20_000, recall_keep_level="tangential")
    async with serve_gateway(mine) as url:
        yield url


@pytest.fixture
async def recall_http(recall_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=recall_gateway, timeout=60) as client:
        yield client
