"""Searching passages by words when a sentence recurs in all of them (a boilerplate line, a tool's banner): the
search ranks a bounded number of matches, and what only a few passages hold is still found first."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from engine.passages import PassageText
from store.db import Database
from store.repositories import memories, search, tenants

BANNER = "The deploy bot reports the pipeline status for every stage across all regions."


async def test_a_recurring_sentence_is_ranked_among_a_bounded_number_of_matches(db: Database) -> None:
    count = search.RANKED_MATCHES + 60
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"words-{uuid.uuid4().hex}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="words")
        passages = [PassageText(i, i, i, i, i, f"{BANNER} Stage {i} finished"
                                + (" and ticket ORD-4242 was reopened." if i == count - 7 else "."))
                    for i in range(count)]
        await search.insert_passages(session, tenant_id=tenant.id, memory_pk=memory.id, episode_key="e1",
                                     passages=passages, vectors=[[1.0] + [0.0] * 383] * count,
                                     at=datetime.now(UTC), language="simple")

    async with db.session() as session:
        scope = {"tenant_id": tenant.id, "memory_pk": memory.id, "kind": "passages"}
        # More passages hold the banner than are ranked: a full page of hits comes back all the same.
        hits = await search.search_words(session, query=BANNER, **scope)
        assert len(hits) == 20 and all(BANNER in h.text for h in hits)
        # The one passage naming the ticket, past the ranked number in insertion order, is found by it first,
        # alone or with the banner's words around it.
        for query in ("ORD-4242", f"{BANNER} Was ORD-4242 reopened?"):
            hits = await search.search_words(session, query=query, **scope)
            assert hits and "ORD-4242" in hits[0].text, (query, hits[:2])
