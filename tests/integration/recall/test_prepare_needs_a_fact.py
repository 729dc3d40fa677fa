"""The lane prepares a walk for the next message only once the memory's graph holds a fact: the walk goes from
fact to fact, so a memory with passages alone (what an ignored note ask leaves) gets none, and the first reply
after its first fact gets one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from engine.passages import PassageText
from providers.factory import make_embedder
from store.db import Database, bind_tenant
from store.repositories import lane, search
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.talk import Talk, export_part
from tests.integration.workflows.lane_support import lane_idle

PASSAGE = "Archive box 42 holds the customs forms for the harbour depot."
FACT = {"note": "Priya signs the customs forms.", "subject": "Priya", "object": "customs forms"}


async def _walks(http: httpx.AsyncClient, key: str, memory_id: str) -> list[dict[str, Any]]:
    return await export_part(http, key, memory_id, "recall_walks")


async def test_the_lane_prepares_no_walk_before_the_memory_holds_a_fact(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    talk = Talk(recall_http, key, "walkless")
    await talk.turn("Hello, let's sort out the archive.")
    await lane_idle(db, tenant_id)
    # A sealed episode's passage and no fact: recall can find the passage, the lane has nothing to walk.
    now = datetime.now(UTC)
    bind_tenant(tenant_id)
    vector = (await make_embedder().embed([PASSAGE]))[0]
    async with db.session() as session, session.begin():
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id="walkless")
        assert pk is not None
        await search.insert_passages(
            session, tenant_id=tenant_id, memory_pk=pk, episode_key="ep-archive",
            passages=[PassageText(ordinal=0, first_seq=1, last_seq=1, first_turn=1, last_turn=1, text=PASSAGE)],
            vectors=[vector], at=now, language="simple")
    await talk.turn("Which archive box holds the customs forms?", "Box 42.")
    await lane_idle(db, tenant_id)
    assert await _walks(recall_http, key, "walkless") == []

    # The first fact arrives; the reply after it is walked from, for turn 4.
    await write_note(db, tenant_id, "walkless", "notes-walkless", [FACT], now)
    await lane_idle(db, tenant_id)
    await talk.turn("Who signs the customs forms?", "Priya does.")
    await lane_idle(db, tenant_id)
    assert [w["for_turn"] for w in await _walks(recall_http, key, "walkless")] == [4]
