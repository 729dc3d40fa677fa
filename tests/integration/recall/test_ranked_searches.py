"""Recall's searches run several to a statement (one round trip, no texts read back): each ranking is the one its
own search would give, whatever mix of kinds, identifiers and vectors shares the statement."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import text

from engine.passages import PassageText
from store.db import Database
from store.repositories import memories, search, tenants
from tests.integration import search_reference

PEOPLE = ["Dana", "Priya", "Tomasz", "Ingrid", "Kofi"]
THINGS = ["checkout migration", "search reindex", "billing rewrite", "warehouse sync", "fraud scoring"]


def _unit(rng: random.Random) -> list[float]:
    vector = np.array([rng.gauss(0, 1) for _ in range(384)], dtype=np.float32)
    return (vector / np.linalg.norm(vector)).tolist()


async def test_searches_sharing_a_statement_rank_as_each_alone(db: Database) -> None:
    rng = random.Random(5)
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"ranked-{uuid.uuid4().hex}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="ranked")
        rows = []
        for g in range(1, 401):
            note = f"{rng.choice(PEOPLE)} owns step {g} of the {rng.choice(THINGS)}, ticket LTH-{g % 37}."
            rows.append({"pk": memory.id, "t": tenant.id, "key": f"k{g}", "note": note, "v": str(_unit(rng))})
        await session.execute(text(
            "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
            "first_turn, last_turn, at, valid_from, source, integrated_at, words, embedding) VALUES (:pk, :t, :key, "
            ":note, 's', 'o', false, ARRAY['e1'], 1, 1, now(), now(), 'user', now(), to_tsvector('simple', :note), "
            "CAST(:v AS vector))"), rows)
        passages = [PassageText(i, i, i, i, i, f"Stand-up {i}: {rng.choice(PEOPLE)} moved the "
                                f"{rng.choice(THINGS)} to ORD-{i % 23}.") for i in range(200)]
        await search.insert_passages(session, tenant_id=tenant.id, memory_pk=memory.id, episode_key="e1",
                                     passages=passages, vectors=[_unit(rng) for _ in passages],
                                     at=datetime.now(UTC), language="simple")
    scope = {"tenant_id": tenant.id, "memory_pk": memory.id, "limit": 7}
    queries: list[tuple[search.Kind, str]] = [
        ("facts", "Priya owns the billing rewrite"), ("facts", "Where do LTH-5 and LTH-12 stand with Priya?"),
        ("passages", "What moved to ORD-4?"), ("passages", "warehouse sync"), ("facts", "nothing matches zzz")]
    vectors = [_unit(rng) for _ in range(4)]
    async with db.session() as session, session.begin():
        together = await search.ranked_by_words(session, queries=queries, **scope)
        alone = [[h.id for h in await search_reference.search_words(session, query=q, kind=k, **scope)]
                 for k, q in queries]
        assert together == alone and all(together[:4]) and together[4] == []
        for kind in ("facts", "passages"):
            together = await search.ranked_by_meaning(session, vectors=vectors, kind=kind, **scope)
            alone = [[h.id for h in await search_reference.search_meaning(session, vector=v, kind=kind, **scope)]
                     for v in vectors]
            assert together == alone and all(len(r) == 7 for r in together)


async def test_a_wide_passage_keeps_its_vector_in_its_row(db: Database) -> None:
    """A passage is a row past 2 kB: its text and words may move out to the TOAST relation, its vector may not
    (migration 0016), or every search by meaning fetches each vector from there (45 ms a search at 20,000
    passages against 1.5 ms)."""
    rng = random.Random(11)
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"wide-{uuid.uuid4().hex}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="wide")
        # A stand-up repeating its lines: the text compresses, its words and the vector are what make the row wide.
        line = "The rollout plan keeps the pricing table, the refund line and the tax rates in step across regions. "
        passages = [PassageText(i, i, i, i, i, f"Stand-up {i}: " + line * 12) for i in range(40)]
        await search.insert_passages(session, tenant_id=tenant.id, memory_pk=memory.id, episode_key="e1",
                                     passages=passages, vectors=[_unit(rng) for _ in passages],
                                     at=datetime.now(UTC), language="simple")
    async with db.session() as session:
        moved_out = (await session.execute(text(
            "SELECT count(*), count(pg_column_toast_chunk_id(embedding)) FROM passages WHERE memory_pk = :pk "
            "AND pg_column_size(passages.*) > 2000"), {"pk": memory.id})).one()
    assert moved_out == (40, 0), moved_out
