"""A conversation excerpt that quotes a value since replaced is shown with the value that replaced it: an excerpt
is the one place a block could otherwise show an earlier value alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from engine.blocks.recall_block import recall_block
from engine.passages import PassageText
from providers.local_judge import LocalJudge
from recall.config import RecallConfig
from recall.find import Recaller
from store.db import Database, bind_tenant
from store.models import PassageRow
from store.repositories import lane, recall_reads, search
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.test_recall_lane import EMBEDDER
from tests.integration.workflows.lane_support import lane_idle

EXCERPT = "user: The harbour launch is on Wednesday.\nassistant: Noted, Wednesday it is."
OLD = [{"note": "The harbour launch is on Wednesday.", "subject": "harbour launch", "object": "Wednesday"}]
NEW = [{"note": "The harbour launch moved to Thursday.", "subject": "harbour launch", "object": "Thursday"}]
ELSEWHERE = "user: The canteen serves soup on Fridays.\nassistant: Good to know."


async def _passages(db: Database, tenant_id: str, memory_id: str, texts: list[str], at: datetime) -> list[int]:
    bind_tenant(tenant_id)
    vectors = await EMBEDDER.embed(texts)
    async with db.session() as session, session.begin():
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
        assert pk is not None
        for n, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            await search.insert_passages(
                session, tenant_id=tenant_id, memory_pk=pk, episode_key=f"ep-{n}",
                passages=[PassageText(ordinal=0, first_seq=1, last_seq=2, first_turn=1, last_turn=1, text=text)],
                vectors=[vector], at=at, language="simple")
        rows = await session.execute(select(PassageRow.id).where(PassageRow.memory_pk == pk).order_by(PassageRow.id))
        return [int(i) for i in rows.scalars()]


async def test_an_excerpt_quoting_a_replaced_value_brings_its_replacement(
    tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, _ = tenant
    now = datetime.now(UTC)
    await write_note(db, tenant_id, "excerpts", "before", OLD, now - timedelta(days=2))
    await lane_idle(db, tenant_id)
    await write_note(db, tenant_id, "excerpts", "after", NEW, now)
    await lane_idle(db, tenant_id)
    ids = await _passages(db, tenant_id, "excerpts", [EXCERPT, ELSEWHERE], now - timedelta(days=2))

    async with db.session() as session:
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id="excerpts")
        assert pk is not None
        passages = await recall_reads.passages_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=ids)
    by_text = {p.text: p for p in passages.values()}
    assert [f.note for f in by_text[EXCERPT].since] == [NEW[0]["note"]]
    assert by_text[ELSEWHERE].since == ()  # the same turns, but it names neither the launch nor Wednesday

    recaller = Recaller(embedder=EMBEDDER, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=30))
    found = await recaller.find(db, tenant_id=tenant_id, memory_id="excerpts",
                                history=[{"role": "user", "content": "What day did we say for the harbour launch?"}])
    assert found is not None
    text, _ = recall_block(found.items, budget=2000, count_text=lambda t: len(t) // 4, in_facts_block=frozenset(
        f.key for f in found.items if not hasattr(f, "text")))  # the facts shown elsewhere: only the excerpt here
    assert text is not None and "Noted, Wednesday it is." in text
    assert "Thursday" in text
