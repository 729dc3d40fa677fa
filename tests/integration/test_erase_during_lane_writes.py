"""Erasing a memory while its lane is writing to it: the erase waits for that write, then takes everything, the
write included, in one go (no deadlock broken by Postgres, no retry, no 500)."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from store.db import Database
from store.models import EpisodeRow, PassageRow, TraceRow
from store.repositories import episode_store, memories, tenants
from tests.integration.held_lane_write import FIRST, NOW, HeldLaneWrite


async def _blocked_by(db: Database, pid: int) -> None:
    """Until some backend waits for a lock that backend `pid` holds."""
    async with db.session() as session:
        for _ in range(400):
            waiting = (await session.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"), {"pid": pid}
            )).scalar_one()
            if waiting:
                return
            await asyncio.sleep(0.05)
    raise AssertionError("the erase never waited for the lane's write")


async def test_an_erase_waits_for_the_lanes_write_and_takes_it_without_a_deadlock(db: Database) -> None:
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"erased-{uuid.uuid4().hex[:8]}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="erased")
        await episode_store.save_cut(session, tenant_id=tenant.id, memory_pk=memory.id, episodes=[FIRST], at=NOW)
    failed: list[str] = []  # each attempt Postgres failed, by its SQLSTATE (40P01: a deadlock it broke)

    async def erase(session: AsyncSession) -> None:
        try:
            await memories.erase_memory(session, tenant_id=tenant.id, memory_id="erased")
        except DBAPIError as exc:
            failed.append(getattr(exc.orig, "sqlstate", None) or repr(exc))
            raise

    write = HeldLaneWrite(db, tenant_id=tenant.id, memory_pk=memory.id)
    lane = asyncio.create_task(write.run())
    await write.added.wait()
    erased = asyncio.create_task(db.transact(erase))  # as DELETE /v1/memories/{id} runs it
    try:
        await _blocked_by(db, write.pid)
    finally:
        write.go_on.set()
    await asyncio.wait_for(asyncio.gather(lane, erased), timeout=30)

    assert failed == []  # the erase ran once, and the lane's write committed before it
    async with db.session() as session:
        for row in (EpisodeRow, PassageRow, TraceRow):
            left = (await session.execute(select(func.count()).select_from(row).where(row.memory_pk == memory.id))
                    ).scalar_one()
            assert left == 0, f"{row.__tablename__} still holds {left} rows of the erased memory"
