"""The step a decorate takes from its best hits when a walk was prepared: facts across the hits' entities,
nearest the message in meaning first; never a retired fact, a fact of no shared entity, or another memory's."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text

from store.db import Database
from store.repositories import memories, recall_graph, tenants


def _vector(*weights: float) -> list[float]:
    """A unit vector in the first few of 384 dimensions: nearness set by hand."""
    raw = [*weights, *[0.0] * (384 - len(weights))]
    norm = sum(w * w for w in raw) ** 0.5
    return [w / norm for w in raw]


async def _memory(session: Any, tenant_id: str, memory_id: str, names: list[str]) -> tuple[int, dict[str, int]]:
    memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
    entities = {name: (await session.execute(text(
        "INSERT INTO entities (memory_pk, tenant_id, name, origin, at) VALUES (:pk, :t, :n, 'test', now()) "
        "RETURNING id"), {"pk": memory.id, "t": tenant_id, "n": name})).scalar_one() for name in names}
    return memory.id, entities


async def _fact(session: Any, tenant_id: str, pk: int, entities: dict[str, int], note: str, subject: str,
                obj: str, vector: list[float], *, retired: bool = False) -> int:
    return int((await session.execute(text(
        "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
        "first_turn, last_turn, at, valid_from, source, integrated_at, subject_entity_id, object_entity_id, "
        "words, embedding, retired_at) VALUES (:pk, :t, :key, :note, :s, :o, false, ARRAY['e1'], 1, 1, now(), "
        "now(), 'user', now(), :se, :oe, to_tsvector('simple', :note), CAST(:v AS vector), "
        "CASE WHEN :retired THEN now() END) RETURNING id"),
        {"pk": pk, "t": tenant_id, "key": uuid.uuid4().hex, "note": note, "s": subject, "o": obj,
         "se": entities[subject], "oe": entities[obj], "v": str(vector), "retired": retired})).scalar_one())


async def test_bridges_cross_the_hits_entities_nearest_the_message_first(db: Database) -> None:
    question = _vector(1, 0, 0)
    names = ["Dana", "checkout migration", "Lisbon", "tea", "Priya", "billing", "Porto"]
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"bridges-{uuid.uuid4().hex}")
        pk, ids = await _memory(session, tenant.id, "bridges", names)
        hit = await _fact(session, tenant.id, pk, ids, "Dana leads the checkout migration.", "Dana",
                          "checkout migration", _vector(0, 1, 0))
        based = await _fact(session, tenant.id, pk, ids, "Dana is based in Lisbon.", "Dana", "Lisbon",
                            _vector(0.9, 0.1, 0))
        tea = await _fact(session, tenant.id, pk, ids, "Dana likes tea.", "Dana", "tea", _vector(0.2, 0, 1))
        # Nearer the question than either, but an earlier value, or across no entity of the hit.
        await _fact(session, tenant.id, pk, ids, "Dana is based in Porto.", "Dana", "Porto", _vector(1, 0, 0),
                    retired=True)
        await _fact(session, tenant.id, pk, ids, "Priya runs billing.", "Priya", "billing", _vector(1, 0, 0))
        # Another memory of the tenant, with its own Dana, nearest of all.
        other_pk, other_ids = await _memory(session, tenant.id, "bridges-other", ["Dana", "Lisbon"])
        await _fact(session, tenant.id, other_pk, other_ids, "Dana is based in Lisbon.", "Dana", "Lisbon",
                    _vector(1, 0, 0))

    async with db.session() as session:
        scope = {"tenant_id": tenant.id, "memory_pk": pk, "vector": question}
        assert await recall_graph.bridges(session, fact_ids=[hit], limit=3, **scope) == [based, tea]
        assert await recall_graph.bridges(session, fact_ids=[hit], limit=1, **scope) == [based]
        # Only the newest `reach` neighbours are weighed: the newest one alone.
        assert await recall_graph.bridges(session, fact_ids=[hit], limit=3, reach=1, **scope) == [tea]
        assert await recall_graph.bridges(session, fact_ids=[], limit=3, **scope) == []
