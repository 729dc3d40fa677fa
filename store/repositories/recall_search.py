"""Recall's searches, run together: the graph by words and by meaning for the whole message and for the
recent conversation ending with it, the graph by meaning for each part, passages by words and by meaning for
each part; facts and passages each fused by rank. Vectors come from the caller (the embedder is a provider).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from engine.recall.fusion import fuse
from store.repositories.search import Hit, search_meaning, search_words

__all__ = ["Candidates", "Query", "search_candidates"]

# A part's own search counts for that part when its hit is this high in the part's ranking.
PART_TOP = 3


@dataclass(frozen=True)
class Query:
    text: str
    vector: Any


@dataclass(frozen=True)
class Candidates:
    """Fact ids and passage ids, best first; facts only a part's own search found, with that part."""

    facts: list[int] = field(default_factory=list)
    passages: list[int] = field(default_factory=list)
    part_of: dict[int, str] = field(default_factory=dict)


def _ids(hits: Sequence[Hit]) -> list[int]:
    return [h.id for h in hits]


async def search_candidates(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, whole: Query, dialogue: Query | None,
    parts: Sequence[Query], language: str = "simple", limit: int = 20,
) -> Candidates:
    scope: dict[str, Any] = {"tenant_id": tenant_id, "memory_pk": memory_pk, "limit": limit}
    broad = [
        _ids(await search_words(session, query=whole.text, language=language, **scope)),
        _ids(await search_meaning(session, vector=whole.vector, **scope)),
    ]
    if dialogue is not None:
        broad.append(_ids(await search_words(session, query=dialogue.text, language=language, **scope)))
        broad.append(_ids(await search_meaning(session, vector=dialogue.vector, **scope)))
    # A message of one part is its own whole: its part searches would only repeat the broad ones.
    own_parts = parts if len(parts) > 1 else []
    by_part = [(p.text, _ids(await search_meaning(session, vector=p.vector, **scope))) for p in own_parts]
    passages = []
    for p in parts or [whole]:
        passages.append(_ids(await search_words(session, query=p.text, kind="passages", language=language, **scope)))
        passages.append(_ids(await search_meaning(session, vector=p.vector, kind="passages", **scope)))
    found_broadly = {i for ranking in broad for i in ranking}
    part_of: dict[int, str] = {}
    for text, ranking in by_part:
        for fact_id in ranking[:PART_TOP]:
            if fact_id not in found_broadly:
                part_of.setdefault(fact_id, text)
    facts = [k for k, _ in fuse([*broad, *(r for _, r in by_part)], limit=limit)]
    return Candidates(facts=facts, passages=[k for k, _ in fuse(passages, limit=limit)], part_of=part_of)
