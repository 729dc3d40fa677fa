"""Row-level security, the second wall: a query that forgot its tenant filter still sees one tenant only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from config.settings import Settings
from store.db import Database, bind_tenant, current_tenant, system_scope
from store.models import ApiKeyRow, MemoryRow, MessageRow, TenantRow

CHAT = {"model": "m", "messages": [{"role": "user", "content": "private to its tenant"}]}


@pytest.fixture
async def app_db(settings: Settings) -> AsyncIterator[Database]:
    database = Database(settings.database.url, pool_size=1, role=settings.database.role, strict=True)
    yield database
    await database.dispose()


async def _unfiltered(db: Database) -> tuple[set[str], set[str], int]:
    """Deliberately no tenant filter anywhere: whatever comes back is what the wall let through."""
    async with db.session() as session:
        memories = set((await session.execute(select(MemoryRow.tenant_id))).scalars())
        tenants = set((await session.execute(select(TenantRow.id))).scalars())
        keys = (await session.execute(select(func.count()).select_from(ApiKeyRow))).scalar_one()
    return memories, tenants, keys


async def test_an_unfiltered_query_sees_only_the_bound_tenant(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str], app_db: Database,
) -> None:
    for _, key in (tenant, other_tenant):
        answer = await http.post("/v1/memories/walled/decorate", json=CHAT, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200, answer.text

    token = current_tenant.set(None)
    try:
        assert await _unfiltered(app_db) == (set(), set(), 0)  # nothing bound: nothing at all

        bind_tenant(tenant[0])
        memories, tenants, keys = await _unfiltered(app_db)
        assert memories == {tenant[0]} and tenants == {tenant[0]} and keys == 1
        async with app_db.session() as session:
            bodies = (await session.execute(select(MessageRow.body))).scalars().all()
        assert bodies == [CHAT["messages"][0]]

        # Writing a row for another tenant is refused too.
        with pytest.raises(DBAPIError, match="row-level security"):
            async with app_db.session() as session, session.begin():
                await session.execute(text("UPDATE memories SET last_turn = last_turn WHERE tenant_id = :t"),
                                      {"t": other_tenant[0]})  # sees none: no error, nothing changed
                session.add(MemoryRow(tenant_id=other_tenant[0], memory_id="smuggled"))
                await session.flush()

        with system_scope():  # the relay's view: every tenant
            memories, _, _ = await _unfiltered(app_db)
        assert {tenant[0], other_tenant[0]} <= memories
    finally:
        current_tenant.reset(token)


async def test_the_app_role_is_not_a_superuser(app_db: Database) -> None:
    async with app_db.session() as session:
        row = (await session.execute(text(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"))).one()
    assert tuple(row) == ("lethe_app", False, False)
