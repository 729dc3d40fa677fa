"""A transaction Postgres fails to break a deadlock (the lane writing the same memory's rows, say) kept nothing:
the caller gets `ConcurrentChange`, a 503 with Retry-After that it may simply send again, never a 500; and
`Database.transact` runs such a transaction again by itself."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from config.settings import Settings
from contracts.errors import ConcurrentChange, ServiceUnavailable
from store.db import Database


@pytest.fixture
async def rows(settings: Settings) -> AsyncIterator[tuple[Database, str]]:
    """A table of two rows of the test's own, and a pool to reach it."""
    db = Database(settings.database.url, pool_size=3)
    table = "deadlock_" + uuid.uuid4().hex[:8]
    async with db.session() as session, session.begin():
        await session.execute(text(f"CREATE TABLE {table} (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)"))
        await session.execute(text(f"INSERT INTO {table} (id) VALUES (1), (2)"))
    yield db, table
    async with db.session() as session, session.begin():
        await session.execute(text(f"DROP TABLE {table}"))
    await db.dispose()


async def _both(session: AsyncSession, table: str, first: int, second: int, gate: asyncio.Barrier,
                later: float = 0.0) -> None:
    """Take row `first`, wait until the other transaction has taken its own, then ask for row `second` (`later`
    seconds after: Postgres fails the transaction that began to wait first, once its deadlock timeout is up)."""
    await session.execute(text(f"UPDATE {table} SET n = n + 1 WHERE id = :i"), {"i": first})
    await gate.wait()
    await asyncio.sleep(later)
    await session.execute(text(f"UPDATE {table} SET n = n + 1 WHERE id = :i"), {"i": second})


async def test_the_transaction_postgres_fails_is_a_concurrent_change_and_keeps_nothing(
    rows: tuple[Database, str]
) -> None:
    db, table = rows
    gate = asyncio.Barrier(2)

    async def one(first: int, second: int) -> None:
        async with db.session() as session, session.begin():
            await _both(session, table, first, second, gate)

    outcomes = await asyncio.gather(one(1, 2), one(2, 1), return_exceptions=True)
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(failed) == 1 and isinstance(failed[0], ConcurrentChange), outcomes
    assert isinstance(failed[0], ServiceUnavailable) and failed[0].retry_after == 1
    async with db.session() as session:
        counts = (await session.execute(text(f"SELECT n FROM {table} ORDER BY id"))).scalars().all()
    assert counts == [1, 1]  # the other transaction's two updates; nothing of the failed one


async def test_transact_runs_a_transaction_postgres_failed_again(rows: tuple[Database, str]) -> None:
    db, table = rows
    gate = asyncio.Barrier(2)
    attempts: list[int] = []

    async def work(session: AsyncSession) -> None:
        attempts.append(1)
        if len(attempts) == 1:
            await _both(session, table, 1, 2, gate)
        else:
            await session.execute(text(f"UPDATE {table} SET n = n + 10 WHERE id = 1"))

    async def other() -> None:  # as the lane would: it asks second, so Postgres fails `work`
        async with db.session() as session, session.begin():
            await _both(session, table, 2, 1, gate, later=0.3)

    await asyncio.gather(db.transact(work), other())
    assert len(attempts) == 2
    async with db.session() as session:
        counts = (await session.execute(text(f"SELECT n FROM {table} ORDER BY id"))).scalars().all()
    assert counts == [11, 1]  # the other's two updates, then the second attempt's; nothing of the first
