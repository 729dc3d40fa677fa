"""The graph as the walk reads it: the texts and vectors the judge rates, a fact's neighbours across its
entities, and the bridges that lead from the best hits toward an answer.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import REAL, Select, bindparam, cast, or_, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import FactRow, PassageRow
from store.query_vectors import query_vector
from store.repositories.recall_reads import usable_facts

__all__ = [
    "BRIDGE_REACH",
    "RatingTexts",
    "bridges",
    "neighbours",
    "passage_rating_texts",
    "rating_texts",
]


# How many of the newest facts across the best hits' entities a bridge is chosen from.
BRIDGE_REACH = 256


@dataclass(frozen=True)
class RatingTexts:
    """What the judge reads to rate some facts: the context, each fact's sentence ("" for one gone meanwhile),
    and the vector stored with each sentence (the embedder made it when the fact joined the graph)."""

    context: str
    notes: list[str]
    vectors: Mapping[str, Sequence[float]]


async def rating_texts(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int],
                       via: Sequence[int], dialogue: str) -> RatingTexts:
    """The dialogue (with the facts that led the walk to these, when any) and the facts' sentences."""
    rows = (await session.execute(_rating_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                         "ids": [*ids, *via]})).all()
    notes = {i: note for i, note, _ in rows}
    if via:
        # One note a line, as it was written: a judge that reads the context by its lines finds them as stored.
        bridges = "\n".join(notes[i] for i in via if i in notes)
        dialogue = f"{dialogue}\n\nKnown from earlier in this conversation:\n{bridges}"
    vectors = {note: vector for _, note, vector in rows if vector is not None}
    return RatingTexts(dialogue, [notes.get(i, "") for i in ids], vectors)


def _as_floats(embedding: Any) -> Any:
    """A stored vector read as `real[]`: the driver decodes that array itself, where the `vector` type is parsed
    from its text one number at a time in Python (sixteen facts' vectors cost milliseconds a step of the walk)."""
    return cast(embedding, ARRAY(REAL)).label("embedding")


@functools.cache
def _rating_statement() -> Select[Any]:
    return (select(FactRow.id, FactRow.note, _as_floats(FactRow.embedding))
            .where(FactRow.tenant_id == bindparam("tenant_id"), FactRow.memory_pk == bindparam("memory_pk"),
                   usable_facts(), FactRow.id.in_(bindparam("ids", expanding=True))))


async def neighbours(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_ids: Sequence[int],
                     limit: int = 32) -> list[int]:
    """Current facts across the entities of these facts (the walk's next level), newest first."""
    if not fact_ids:
        return []
    rows = await session.execute(_neighbours_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                            "ids": list(fact_ids), "limit": limit})
    return list(rows.scalars())


def _entities_of(tenant_id: Any, memory_pk: Any, ids: Any) -> Any:
    """The entities the facts `ids` are about, as subject or object."""
    return (select(FactRow.subject_entity_id.label("entity"))
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))
            .union(select(FactRow.object_entity_id)
                   .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))))


@functools.cache
def _neighbours_statement() -> Select[Any]:
    """One round trip: the entities of the facts, then the current facts on them."""
    tenant_id, memory_pk = bindparam("tenant_id"), bindparam("memory_pk")
    ids = bindparam("ids", expanding=True)
    ends = _entities_of(tenant_id, memory_pk, ids)
    return (select(FactRow.id)
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, usable_facts(),
                   FactRow.retired_at.is_(None), FactRow.id.not_in(ids),
                   or_(FactRow.subject_entity_id.in_(ends), FactRow.object_entity_id.in_(ends)))
            .order_by(FactRow.id.desc()).limit(bindparam("limit")))


async def bridges(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_ids: Sequence[int], vector: Any,
                  limit: int, reach: int = BRIDGE_REACH) -> list[int]:
    """Current facts one step across the entities of these facts, nearest in meaning to `vector` first: the
    bridge a two-hop question needs, found without the judge. Of an entity's facts the newest `reach` are
    weighed (an entity a thousand facts hang on would otherwise cost a distance to each)."""
    if not fact_ids or limit < 1:
        return []
    rows = await session.execute(_bridges_statement(), {
        "tenant_id": tenant_id, "memory_pk": memory_pk, "ids": list(fact_ids), "vector": vector, "limit": limit,
        "reach": reach})
    return list(rows.scalars())


@functools.cache
def _bridges_statement() -> Select[Any]:
    tenant_id, memory_pk = bindparam("tenant_id"), bindparam("memory_pk")
    ids = bindparam("ids", expanding=True)
    ends = _entities_of(tenant_id, memory_pk, ids)
    near = (select(FactRow.id, FactRow.embedding)
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, usable_facts(),
                   FactRow.retired_at.is_(None), FactRow.id.not_in(ids), FactRow.embedding.is_not(None),
                   or_(FactRow.subject_entity_id.in_(ends), FactRow.object_entity_id.in_(ends)))
            .order_by(FactRow.id.desc()).limit(bindparam("reach")).subquery("near"))
    distance = near.c.embedding.cosine_distance(query_vector("vector", FactRow.embedding.type.dim))
    return select(near.c.id).order_by(distance, near.c.id.desc()).limit(bindparam("limit"))


async def passage_rating_texts(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                               ) -> tuple[list[str], dict[str, Sequence[float]]]:
    """What the judge reads to rate these passages ("" for one gone meanwhile), and the vector stored with each
    (the embedder made it when the passage was cut)."""
    rows = (await session.execute(
        select(PassageRow.id, PassageRow.text, _as_floats(PassageRow.embedding))
        .where(PassageRow.tenant_id == tenant_id, PassageRow.memory_pk == memory_pk, PassageRow.id.in_(list(ids)))
    )).all()
    texts = {i: text for i, text, _ in rows}
    return [texts.get(i, "") for i in ids], {text: vector for _, text, vector in rows if vector is not None}
