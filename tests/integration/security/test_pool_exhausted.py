"""Overload: when every database connection stays busy past the pool's wait, the answer is a 503 with
Retry-After (retry later, nothing was begun), not a 500."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from contracts.errors import ServiceUnavailable
from store.db import Database


async def test_a_call_that_cannot_get_a_connection_is_told_to_retry(postgres_url: str) -> None:
    db = Database(postgres_url, pool_size=1, pool_timeout=0.2)  # one connection, one more in overflow
    release = asyncio.Event()

    async def hold() -> None:
        async with db.session() as session:
            await session.execute(text("SELECT 1"))
            await release.wait()

    holders = [asyncio.create_task(hold()) for _ in range(2)]
    try:
        while db.engine.pool.checkedout() < 2:  # type: ignore[attr-defined]
            await asyncio.sleep(0.01)
        with pytest.raises(ServiceUnavailable) as refused:
            async with db.session() as session:
                await session.execute(text("SELECT 1"))
        assert refused.value.retry_after > 0
    finally:
        release.set()
        await asyncio.gather(*holders)
        await db.dispose()
