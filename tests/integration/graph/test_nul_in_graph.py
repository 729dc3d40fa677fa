"""A tool output with NUL in it reaches the graph's tables intact: passages and entity names keep it, and the
passage is still found by its words (Postgres text cannot hold NUL; store/nul.py escapes it)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from sqlalchemy import select

from engine.passages import PassageText
from store.db import Database, bind_tenant
from store.models import EntityRow, PassageRow
from store.repositories import lane, search
from tests.integration import search_reference

TEXT = "tool output: ORD-55120 shipped\x00\x00 to db-kestrel-9"


async def test_a_passage_and_an_entity_name_with_nul_are_stored_and_read_back_exactly(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database,
) -> None:
    tenant_id, key = tenant
    response = await http.post("/v1/memories/nul-graph/decorate", headers={"Authorization": f"Bearer {key}"},
                               json={"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    assert response.status_code == 200, response.text
    now = datetime.now(UTC)
    bind_tenant(tenant_id)
    async with db.session() as session, session.begin():
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id="nul-graph")
        assert pk is not None
        added = await search.insert_passages(
            session, tenant_id=tenant_id, memory_pk=pk, episode_key="ep-nul",
            passages=[PassageText(ordinal=0, first_seq=1, last_seq=1, first_turn=1, last_turn=1, text=TEXT)],
            vectors=[[0.0] * 383 + [1.0]], at=now, language="simple")
        session.add(EntityRow(memory_pk=pk, tenant_id=tenant_id, name="flag\x00v3", origin="test", at=now))
    assert added == 1
    async with db.session() as session:
        stored = (await session.execute(select(PassageRow.text).where(PassageRow.memory_pk == pk))).scalar_one()
        name = (await session.execute(select(EntityRow.name).where(EntityRow.memory_pk == pk))).scalar_one()
        found = await search_reference.search_words(session, tenant_id=tenant_id, memory_pk=pk, query="ORD-55120",
                                          kind="passages")
    assert stored == TEXT
    assert name == "flag\x00v3"
    assert found, "the passage is found by an identifier it holds"
