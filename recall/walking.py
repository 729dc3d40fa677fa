"""The walk over one memory's graph, against one dialogue: the engine's loop (`engine.recall.walk`) given its
two reads, rating facts and finding their neighbours, written once here for the gateway's inline walk and the
lane's prepared one. Passages have no entities to walk across: the best few are rated once, beside the facts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.recall.walk import WalkRules, walk
from providers.embedder import Embedder, prime
from providers.judge import Judge
from providers.usage import UsageScope
from recall.config import RecallConfig
from store.db import Database
from store.repositories import recall_graph
from store.repositories.recall_search import Candidates

__all__ = ["GraphWalk", "walk_candidates"]

# Goes around each query: the hot path's `Progress.step`, so a find past its deadline stops between queries.
Step = Callable[[], contextlib.AbstractAsyncContextManager[None]]


@dataclass(frozen=True)
class GraphWalk:
    """The walk's reads of one memory on one session, its judge reading each fact against `dialogue`."""

    session: Any
    judge: Judge
    embedder: Embedder
    rules: WalkRules
    tenant_id: str
    memory_pk: int
    dialogue: str
    scope: UsageScope
    step: Step = contextlib.nullcontext

    async def rate(self, ids: Sequence[int], via: Sequence[int]) -> list[int]:
        """The judge's level for each fact, read with the facts that led to it (`via`)."""
        async with self.step():
            read = await recall_graph.rating_texts(self.session, tenant_id=self.tenant_id, memory_pk=self.memory_pk,
                                                   ids=ids, via=via, dialogue=self.dialogue)
        # The judge compares by meaning: the stored vectors spare it embedding the notes again.
        prime(self.embedder, read.vectors)
        return [int(v.level) for v in await self.judge.rate_relevance(read.context, read.notes, scope=self.scope)]

    async def neighbours(self, ids: Sequence[int]) -> list[int]:
        """The facts sharing an entity with these."""
        async with self.step():
            return await recall_graph.neighbours(self.session, tenant_id=self.tenant_id, memory_pk=self.memory_pk,
                                                 fact_ids=ids)

    async def facts(self, seeds: Sequence[int], known: Mapping[int, int] | None = None) -> dict[int, int]:
        """Every fact the walk rated from these seeds, with its level (`engine.recall.walk.walk`)."""
        return await walk(seeds, rate=self.rate, neighbours=self.neighbours, rules=self.rules, known=known)

    async def passages(self, ids: Sequence[int]) -> dict[int, int]:
        """The best passages' levels, as many as one step of the walk rates."""
        if not ids:
            return {}
        shown = list(ids[:self.rules.per_step])
        async with self.step():
            texts, vectors = await recall_graph.passage_rating_texts(self.session, tenant_id=self.tenant_id,
                                                                     memory_pk=self.memory_pk, ids=shown)
        prime(self.embedder, vectors)  # a passage is a few hundred tokens: never embed one again for rating
        verdicts = await self.judge.rate_relevance(self.dialogue, texts, scope=self.scope)
        return {p: int(v.level) for p, v in zip(shown, verdicts, strict=True)}


async def walk_candidates(
    db: Database, judge: Judge, embedder: Embedder, config: RecallConfig, *, tenant_id: str, memory_pk: int,
    dialogue: str, candidates: Candidates, known: Mapping[int, int], scope: UsageScope,
    step: Step = contextlib.nullcontext,
) -> tuple[dict[int, int], dict[int, int]]:
    """The walk over the candidate facts (levels by fact id) and the passages' levels, in a session of its own
    so a deadline that cancels it leaves no other work half done."""
    async with db.session() as session:
        graph = GraphWalk(session, judge, embedder, config.walk_rules(), tenant_id, memory_pk, dialogue, scope, step)
        levels = await graph.facts(candidates.facts, known=known)
        return levels, await graph.passages(candidates.passages)
