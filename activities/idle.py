"""The idle gate's activity (issue #37, seed 004): when a conversation of a user has gone quiet, its turns not
yet made searchable become passages of the user's graph, dated and marked with the conversation they came from,
so the user's next conversation can recall them. Idempotent: `idle_through_seq` moves in the same transaction
as the insert, and a stretch already handed over is not read again.

Where an extraction model is configured (the OpenAI-compatible judge), it also reads the quiet turns for facts,
each with whose word it rests on; those the tenant's profile lets in join the user's graph, and its lane
integrates them. With the embedded judge there is no extraction model: the passages are what recall across
conversations finds, with the facts the agent's model noted (fed by the lanes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from temporalio import activity

from activities.tracing import job_span
from contracts.lane_types import IdleInput
from engine.passages import PassageText, cut_passages
from providers.embedder import Embedder
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import idle

__all__ = ["IdleActivities"]


@dataclass
class IdleActivities:
    """Registered bound, beside the lane's recall jobs: the worker owns the pool and the embedder."""

    db: Database
    embedder: Embedder
    language: str = "simple"
    # Reads facts out of the quiet turns (`Judge.extract_facts`); None: passages only.
    judge: Judge | None = None

    def all(self) -> list[object]:
        return [self.index_quiet_turns]

    @activity.defn
    async def index_quiet_turns(self, params: IdleInput) -> int:
        """The quiet conversation's new turns as passages of its user's graph; returns how many were added."""
        memory = params.memory
        with job_span("index_quiet_turns", memory.tenant_id):
            async with self.db.session() as session:
                quiet = await idle.quiet_turns(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            if quiet is None:
                return 0
            passages = cut_passages(quiet.messages)
            scope = UsageScope(memory.tenant_id, memory.memory_id)
            vectors: Any = await self.embedder.embed([p.text for p in passages], scope=scope) if passages else []
            extracted = await self._extract(passages, scope)
            async with self.db.session() as session, session.begin():
                added = await idle.save_quiet_passages(session, tenant_id=memory.tenant_id, quiet=quiet,
                                                       passages=passages, vectors=vectors,
                                                       at=quiet.messages[-1].at, language=self.language,
                                                       extracted=extracted)
        activity.logger.info("quiet turns indexed for the user's graph",
                             extra={"memory_id": memory.memory_id, "passages": added, "facts": len(extracted)})
        return added

    async def _extract(self, passages: Sequence[PassageText], scope: UsageScope) -> list[dict[str, Any]]:
        """The facts the judge reads out of each passage, with the passage's turns."""
        if self.judge is None or not passages:
            return []
        found = await self.judge.extract_facts([p.text for p in passages], scope=scope)
        return [{"note": f.note, "subject": f.subject, "object": f.object, "source": f.source,
                 "first_turn": p.first_turn, "last_turn": p.last_turn}
                for p, facts in zip(passages, found, strict=True) for f in facts]
