"""Single searches by words and by meaning, with texts and scores, and their fusion: the reference the
recall searches (`store.repositories.search.ranked_by_words` and `ranked_by_meaning`, built from the same
statements) are checked against, and what the search tests read hits with."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.recall.fusion import fuse as fuse_ranks
from store.query_vectors import query_vector
from store.repositories.search import RANKED_MATCHES, Kind, _identifiers, _table, _words_statement


@dataclass(frozen=True)
class Hit:
    kind: str
    id: int
    text: str
    score: float
    at: datetime


async def search_words(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, query: str, kind: Kind = "facts",
    language: str = "simple", limit: int = 20,
) -> list[Hit]:
    """Full-text matches ranked by `ts_rank`; identifiers in the query also match by their exact form."""
    identifiers = _identifiers(query)
    rows = await session.execute(_words_statement(kind, len(identifiers)), {
        "tenant_id": tenant_id, "memory_pk": memory_pk, "language": language, "query": query,
        "ranked": RANKED_MATCHES, "limit": limit, **{f"identifier_{n}": i for n, i in enumerate(identifiers)}})
    return [Hit(kind, i, t, float(r), at) for i, t, r, at in rows]


async def search_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, vector: Any, kind: Kind = "facts", limit: int = 20,
) -> list[Hit]:
    """Nearest by cosine over the HNSW index (its scans relaxed for every connection: `store.db.Database`); the
    score is the similarity."""
    rows = await session.execute(_meaning_statement(kind), {
        "tenant_id": tenant_id, "memory_pk": memory_pk, "limit": limit, "vector": vector})
    return [Hit(kind, i, t, 1.0 - float(d), at) for i, t, d, at in rows]


@functools.cache
def _meaning_statement(kind: Kind) -> Select[Any]:
    """The search by meaning, built once (see `_words_statement`)."""
    model, text_column, live = _table(kind)
    distance = model.embedding.cosine_distance(query_vector("vector", model.embedding.type.dim))
    return (select(model.id, text_column, distance, model.at)
            .where(model.tenant_id == bindparam("tenant_id"), model.memory_pk == bindparam("memory_pk"), live,
                   model.embedding.is_not(None))
            .order_by(distance).limit(bindparam("limit")))


def fuse(*rankings: Sequence[Hit], limit: int = 20) -> list[Hit]:
    """Hits of several searches as one ranking, by reciprocal rank (`engine.recall.fusion`: why RRF)."""
    first: dict[tuple[str, int], Hit] = {}
    for ranking in rankings:
        for hit in ranking:
            first.setdefault((hit.kind, hit.id), hit)
    fused = fuse_ranks([[(h.kind, h.id) for h in ranking] for ranking in rankings], limit=limit)
    return [Hit(first[k].kind, first[k].id, first[k].text, round(score, 6), first[k].at) for k, score in fused]
