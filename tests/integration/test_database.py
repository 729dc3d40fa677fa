"""The connection pool: a connection Postgres closed is replaced at checkout, and every connection lets HNSW
scans go past other memories' nearer rows and plans each statement for its values, with no statement spent on
any of it."""

from __future__ import annotations

import asyncio
import uuid

import numpy as np
from sqlalchemy import event, text

from config.settings import Settings
from store.db import Database, bind_tenant
from store.repositories import memories, tenants
from store.repositories.search import nearest_by_meaning
from tests.integration import search_reference


async def test_a_connection_the_server_closed_is_replaced_without_an_error(settings: Settings) -> None:
    own = Database(settings.database.url, pool_size=1)
    try:
        async with own.session() as session:
            pid = (await session.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        # Postgres ends the pooled connection's backend (a restart, an idle timeout, an operator).
        other = Database(settings.database.url)
        async with other.session() as session:
            assert (await session.execute(text("SELECT pg_terminate_backend(:p, 5000)"), {"p": pid})).scalar_one()
        await other.dispose()
        await asyncio.sleep(0.1)  # the socket's end reaches the driver
        for _ in range(3):
            async with own.session() as session:
                fresh = (await session.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        assert fresh != pid
    finally:
        await own.dispose()


async def test_a_healthy_checkout_sends_nothing_before_its_statement(settings: Settings) -> None:
    """No ping per checkout: a decorate and its recall check out three connections, each ping a round trip."""
    own = Database(settings.database.url, pool_size=1)
    sent: list[str] = []
    event.listen(own.engine.sync_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: sent.append(statement))
    pings: list[object] = []
    original = own.engine.dialect.do_ping
    own.engine.dialect.do_ping = lambda connection: pings.append(connection) or original(connection)  # type: ignore[method-assign]
    try:
        for _ in range(3):
            async with own.session() as session:
                assert (await session.execute(text("SELECT 41 + 1"))).scalar_one() == 42
        assert pings == []
        assert [s for s in sent if "41 + 1" in s] == ["SELECT 41 + 1"] * 3
    finally:
        await own.dispose()


def _unit(vector: np.ndarray) -> str:
    return str((vector / np.linalg.norm(vector)).astype(np.float32).tolist())


async def _crowd(db: Database) -> tuple[str, int, np.ndarray]:
    """A tenant with two memories: 1,200 facts of one near a target vector, 600 of the other anywhere. Returns
    the tenant, the far memory's pk and the target."""
    rng = np.random.default_rng(11)
    target = rng.normal(size=384)
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"crowd-{uuid.uuid4().hex}")
        crowd = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="crowd")
        far = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="far")
        rows = [{"pk": crowd.id, "t": tenant.id, "key": f"c{g}", "note": f"crowd {g}",
                 "v": _unit(target + rng.normal(scale=0.05, size=384))} for g in range(1200)]
        rows += [{"pk": far.id, "t": tenant.id, "key": f"f{g}", "note": f"far {g}",
                  "v": _unit(rng.normal(size=384))} for g in range(600)]
        await session.execute(text(
            "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
            "first_turn, last_turn, at, valid_from, source, integrated_at, words, embedding) VALUES (:pk, :t, :key, "
            ":note, 's', 'o', false, ARRAY['e1'], 1, 1, now(), now(), 'user', now(), to_tsvector('simple', :note), "
            "CAST(:v AS vector))"), rows)
        await session.execute(text("ANALYZE facts"))
    return tenant.id, far.id, target


async def test_a_memory_behind_a_crowd_of_nearer_rows_is_found(db: Database, settings: Settings) -> None:
    """Every connection scans HNSW iteratively: a search stopping at its first candidates, all another memory's,
    would find none of this memory's facts."""
    tenant_id, far, target = await _crowd(db)
    app = Database(settings.database.url, role=settings.database.role)
    try:
        bind_tenant(tenant_id)  # for this test's task alone
        async with app.session() as session:
            assert (await session.execute(text("SHOW hnsw.iterative_scan"))).scalar_one() == "relaxed_order"
            hits = await search_reference.search_meaning(session, tenant_id=tenant_id, memory_pk=far,
                                               vector=(target / np.linalg.norm(target)).tolist(), limit=5)
        assert len(hits) == 5 and all(h.text.startswith("far ") for h in hits), hits
    finally:
        await app.dispose()


async def test_a_search_run_again_and_again_is_planned_for_its_memory_every_time(
    db: Database, settings: Settings
) -> None:
    """From a prepared statement's sixth run Postgres may keep one plan for any memory; for a memory among others
    that plan scans every memory's rows. Every connection plans each run for its values instead."""
    tenant_id, far, target = await _crowd(db)
    app = Database(settings.database.url, role=settings.database.role, pool_size=1)
    try:
        bind_tenant(tenant_id)
        async with app.session() as session:
            for turn in range(8):
                vector = target + np.random.default_rng(turn).normal(size=384)
                await nearest_by_meaning(session, tenant_id=tenant_id, memory_pk=far,
                                         vectors=[(vector / np.linalg.norm(vector)).astype(np.float32)])
            plans = (await session.execute(text(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%<=>%' "
                "AND statement NOT LIKE '%pg_prepared_statements%'"))).all()
        assert plans and all(generic == 0 and custom >= 8 for generic, custom in plans), plans
    finally:
        await app.dispose()
