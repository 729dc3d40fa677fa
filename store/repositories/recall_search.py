"""Recall's searches, run together. The graph is searched by words and by meaning with the new message alone
and with the latest stretch of dialogue that ends in it, and by meaning with each part of the message;
passages are searched by words and by meaning per part. Fact hits and passage hits are each fused by rank.
Vectors come from the caller (the embedder is a provider).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from engine.recall.floor import ScoreFloor, lead_of, over_floor
from engine.recall.fusion import fuse
from store.repositories.search import nearest_by_meaning, ranked_by_words

__all__ = ["Candidates", "Query", "Searched", "search_by_meaning", "search_by_words", "search_candidates"]

# A part's own search counts for that part when its hit is this high in the part's ranking.
PART_TOP = 3


@dataclass(frozen=True)
class Query:
    text: str
    vector: Any


@dataclass(frozen=True)
class Candidates:
    """Fact ids and passage ids, best first, with their fused scores; facts only a part's own search found, with
    that part; whether the message's own words matched anything, and how near its meaning came (`engine.recall.
    floor`: what may enter a block unrated)."""

    facts: list[int] = field(default_factory=list)
    passages: list[int] = field(default_factory=list)
    part_of: dict[int, str] = field(default_factory=dict)
    fact_scores: dict[int, float] = field(default_factory=dict)
    passage_scores: dict[int, float] = field(default_factory=dict)
    worded: bool = False
    nearest: float | None = None
    leads: tuple[tuple[float, float], ...] = ()

    def unrated(self, floor: ScoreFloor, *, facts: int, passages: int) -> tuple[list[int], list[int]]:
        """The best `facts` and `passages` hits that may enter a block without the walk's rating: none when the
        message touches nothing, else those over the relative floor."""
        if not self.touches(floor):
            return [], []
        return (over_floor([(i, self.fact_scores[i]) for i in self.facts[:facts]], floor),
                over_floor([(i, self.passage_scores[i]) for i in self.passages[:passages]], floor))

    def touches(self, floor: ScoreFloor) -> bool:
        return floor.touches(worded=self.worded, nearest=self.nearest, leads=self.leads)


@dataclass
class Searched:
    """The searches' rankings as they complete: a deadline that cuts the searching short still has the hits
    of those done (`candidates()` fuses what is there)."""

    broad: list[list[int]] = field(default_factory=list)
    by_part: list[tuple[str, list[int]]] = field(default_factory=list)
    passages: list[list[int]] = field(default_factory=list)
    limit: int = 20
    # The message's own searches (not the dialogue's): whether its words matched, its nearest similarity, and
    # each ranking's nearest with its lead over the next (`engine.recall.floor.lead_of`).
    worded: bool = False
    nearest: float | None = None
    leads: list[tuple[float, float]] = field(default_factory=list)

    def near(self, rankings: Sequence[Sequence[tuple[int, float]]]) -> None:
        """Keep the best similarity the message's own searches by meaning found, and how each one's nearest
        stands against the rest."""
        best = max((similarity for ranking in rankings for _, similarity in ranking[:1]), default=None)
        if best is not None and (self.nearest is None or best > self.nearest):
            self.nearest = best
        for ranking in rankings:
            lead = lead_of([similarity for _, similarity in ranking])
            if lead is not None:
                self.leads.append(lead)

    def candidates(self) -> Candidates:
        found_broadly = {i for ranking in self.broad for i in ranking}
        part_of: dict[int, str] = {}
        for text, ranking in self.by_part:
            for fact_id in ranking[:PART_TOP]:
                if fact_id not in found_broadly:
                    part_of.setdefault(fact_id, text)
        facts = fuse([*self.broad, *(r for _, r in self.by_part)], limit=self.limit)
        passages = fuse(self.passages, limit=self.limit)
        return Candidates(facts=[k for k, _ in facts], passages=[k for k, _ in passages], part_of=part_of,
                          fact_scores=dict(facts), passage_scores=dict(passages), worded=self.worded,
                          nearest=self.nearest, leads=tuple(self.leads))


async def search_candidates(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, whole: Query, dialogue: Query | None,
    parts: Sequence[Query], language: str = "simple", limit: int = 20, into: Searched | None = None,
) -> Candidates:
    """Every search, each ranking added to `into` as soon as it is done."""
    found = into if into is not None else Searched(limit=limit)
    texts = [whole.text, dialogue.text if dialogue is not None else None]
    await search_by_words(session, tenant_id=tenant_id, memory_pk=memory_pk, texts=texts,
                          parts=[p.text for p in parts], language=language, into=found)
    vectors = [whole.vector, dialogue.vector if dialogue is not None else None]
    await search_by_meaning(session, tenant_id=tenant_id, memory_pk=memory_pk, vectors=vectors, parts=parts,
                            into=found)
    return found.candidates()


async def search_by_words(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, texts: Sequence[str | None], parts: Sequence[str],
    language: str, into: Searched, own: bool = True,
) -> None:
    """The searches that need no vectors (the hot path runs them while the message is being embedded): the
    graph by words for the whole message and the dialogue, passages by words for each part; in one statement.
    `own`: the first text (and the parts) are the message's own, whose matches tell that it touches the memory."""
    facts = [t for t in texts if t is not None]
    passages = list(parts) or [t for t in texts[:1] if t is not None]
    rankings = await ranked_by_words(session, tenant_id=tenant_id, memory_pk=memory_pk, language=language,
                                     limit=into.limit,
                                     queries=[*(("facts", t) for t in facts), *(("passages", p) for p in passages)])
    into.broad.extend(rankings[:len(facts)])
    into.passages.extend(rankings[len(facts):])
    if own and texts and texts[0] is not None:
        into.worded = into.worded or bool(rankings[0]) or any(rankings[len(facts):])


async def search_by_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, vectors: Sequence[Any], parts: Sequence[Query],
    into: Searched, passages_session: AsyncSession | None = None,
) -> None:
    """The graph by meaning for the whole message, the dialogue and each part; passages by meaning for each
    part (`vectors`: the whole message's and the dialogue's, None for one not searched). Each kind is one
    statement; given a session of its own for the passages, the two run at once."""
    def facts() -> Coroutine[Any, Any, None]:
        return _facts_by_meaning(session, tenant_id=tenant_id, memory_pk=memory_pk, vectors=vectors, parts=parts,
                                 into=into)

    def passages() -> Coroutine[Any, Any, None]:
        return _passages_by_meaning(passages_session or session, tenant_id=tenant_id, memory_pk=memory_pk,
                                    whole=vectors[0], parts=parts, into=into)

    if passages_session is None:
        # Each made only when its turn comes: a deadline that cancels the first leaves no coroutine unawaited.
        await facts()
        await passages()
    else:
        await asyncio.gather(facts(), passages())


async def _facts_by_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, vectors: Sequence[Any], parts: Sequence[Query],
    into: Searched,
) -> None:
    broad = [v for v in vectors if v is not None]
    # A message of one part is its own whole: its part searches would only repeat the broad ones.
    by_part = list(parts) if len(parts) > 1 else []
    if not broad and not by_part:
        return
    nearest = await nearest_by_meaning(session, tenant_id=tenant_id, memory_pk=memory_pk, limit=into.limit,
                                       vectors=[*broad, *(p.vector for p in by_part)])
    # The message's own: its whole (the first vector, when searched) and its parts; not the dialogue.
    into.near([*(nearest[:1] if vectors and vectors[0] is not None else []), *nearest[len(broad):]])
    rankings = [[i for i, _ in ranking] for ranking in nearest]
    into.broad.extend(rankings[:len(broad)])
    into.by_part.extend((p.text, r) for p, r in zip(by_part, rankings[len(broad):], strict=True))


async def _passages_by_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, whole: Any, parts: Sequence[Query], into: Searched,
) -> None:
    vectors = [p.vector for p in parts] or ([whole] if whole is not None else [])
    if not vectors:
        return
    nearest = await nearest_by_meaning(session, tenant_id=tenant_id, memory_pk=memory_pk, vectors=vectors,
                                       kind="passages", limit=into.limit)
    into.near(nearest)
    into.passages.extend([i for i, _ in ranking] for ranking in nearest)
