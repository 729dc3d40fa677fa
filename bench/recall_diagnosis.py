"""Why a question's answer was not in front of Lethe's model: for each answer fact missing, where recall lost it.

In order: was the fact written (a fact with its note), is it in the graph (integrated, not merged, not retired),
was it in this turn's recall block (and which way the block was made: prepared, inline, hits, partial), did the
message's searches find it (its fused rank), what level the walk gave it, and so whether it was kept by the walk
but left out of the block (its budget, or already in view). The searches and the walk are run again in-process
on the stack's own database, as the gateway runs them for this message (no prepared walk).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

# The project before bench/, whose recall.py and providers.py would hide the packages of those names.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recall_conversation import Fact, Question  # noqa: E402
from sqlalchemy import text  # noqa: E402

from engine.recall.parts import split_parts  # noqa: E402
from engine.recall.walk import is_kept  # noqa: E402
from providers.embedder import Embedder  # noqa: E402
from providers.local_judge import LocalJudge  # noqa: E402
from providers.usage import UsageScope  # noqa: E402
from recall.config import RecallConfig  # noqa: E402
from recall.walking import walk_candidates  # noqa: E402
from store.db import Database  # noqa: E402
from store.repositories import recall_reads  # noqa: E402
from store.repositories.recall_search import Query, search_candidates  # noqa: E402

__all__ = ["Diagnosis"]

LEVELS = ("unrelated", "tangential", "relevant", "central")


class Diagnosis:
    def __init__(self, database_url: str, tenant_id: str, memory_id: str, embedder: Embedder) -> None:
        self.url, self.tenant_id, self.memory_id = database_url, tenant_id, memory_id
        self.embedder, self.judge, self.config = embedder, LocalJudge(embedder), RecallConfig()
        self.causes: dict[str, int] = {}

    def miss(self, question: Question, missing: list[Fact], facts: list[dict[str, Any]],
             block: dict[str, Any] | None, made_by: str, asked: list[tuple[int, int]]) -> list[str]:
        """One line per missing answer fact, saying where it was lost."""
        by_note = {str(f["note"]).strip().lower(): f for f in facts}
        rows = {fact.id: by_note.get(fact.note.strip().lower()) for fact in missing}
        graph_ids = [int(r["id"]) for r in rows.values() if r is not None and _in_graph(r)]
        explained = asyncio.run(self._explain(question.text, graph_ids)) if graph_ids else {}
        lines = []
        for fact in missing:
            row = rows[fact.id]
            if row is None:
                covered = any(first <= fact.turn <= last for first, last in asked)
                cause = "never written" + ("" if covered else f" (no note ask covered its turn {fact.turn}; "
                                                              f"{asyncio.run(self._left(fact.turn))})")
            elif not row.get("integrated_at"):
                cause = "written, not yet in the graph"
            elif row.get("merged_into"):
                cause = "merged into another fact"
            elif row.get("retired_at"):
                by = next((f for f in facts if f.get("id") == row.get("retired_by")
                           or f.get("key") == row.get("retired_by")), None)
                cause = "retired" + (f" (by {by['note']!r}, {row.get('retired_as') or 'update'})" if by else "")
            elif block is not None and int(row["id"]) in block["fact_ids"]:
                cause = "in the block (the check missed it)"
            else:
                rank, level = explained.get(int(row["id"]), (None, None))
                if rank is None and level is None:
                    cause = "not found by the searches"
                elif level is None:
                    cause = f"found (rank {rank}), not rated by the walk"
                elif not is_kept(level, self.config.walk_rules()):
                    cause = f"found (rank {rank}), rated {LEVELS[level]} by the walk"
                else:
                    cause = f"kept by the walk ({LEVELS[level]}, rank {rank}), left out of the block"
            self.causes[cause.split(" (")[0]] = self.causes.get(cause.split(" (")[0], 0) + 1
            made = f"no block ({made_by})" if block is None else \
                f"block {block['provenance']}, {len(block['fact_ids'])} facts"
            lines.append(f"  miss {question.id} ({question.kind}, turn {question.turn}, {made}): "
                         f"{fact.note!r}: {cause}")
        return lines

    async def _left(self, turn: int) -> str:
        """How the episodes holding `turn` left the view: each state change with its reason, and its asks."""
        db = Database(self.url, pool_size=1)
        try:
            async with db.session() as session:
                rows = (await session.execute(text(
                    "SELECT e.episode_key, e.first_turn, e.last_turn, e.asks, e.sealed_without_facts, "
                    "string_agg(coalesce(t.before, '-') || '>' || t.after || ' by ' || t.reason, ', ' ORDER BY t.id) "
                    "FROM episodes e JOIN memories m ON m.id = e.memory_pk "
                    "LEFT JOIN episode_transitions t ON t.memory_pk = e.memory_pk AND t.episode_key = e.episode_key "
                    "WHERE m.tenant_id = :t AND m.memory_id = :m AND e.first_turn <= :turn AND e.last_turn >= :turn "
                    "GROUP BY e.id ORDER BY e.first_seq"),
                    {"t": self.tenant_id, "m": self.memory_id, "turn": turn})).all()
        finally:
            await db.dispose()
        return "; ".join(f"episode {key} (turns {first}-{last}, asked {asks} times"
                         f"{', sealed without facts' if unasked else ''}): {changes or 'no change'}"
                         for key, first, last, asks, unasked, changes in rows) or "in no episode"

    async def _explain(self, text: str, fact_ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
        db = Database(self.url, pool_size=2)
        scope = UsageScope(self.tenant_id, self.memory_id)
        try:
            async with db.session() as session:
                known = await recall_reads.memory_turn(session, tenant_id=self.tenant_id, memory_id=self.memory_id)
                if known is None:
                    return {}
                pk = known[0]
                parts = split_parts(text)
                dialogue = f"user: {text}"  # the gateway's recent dialogue for a request of one new message
                vectors = await self.embedder.embed([text, dialogue, *parts], scope=scope)
                candidates = await search_candidates(
                    session, tenant_id=self.tenant_id, memory_pk=pk, whole=Query(text, vectors[0]),
                    dialogue=Query(dialogue, vectors[1]),
                    parts=[Query(p, v) for p, v in zip(parts, vectors[2:], strict=True)])
            levels, _ = await walk_candidates(db, self.judge, self.embedder, self.config, tenant_id=self.tenant_id,
                                              memory_pk=pk, dialogue=dialogue, candidates=candidates, known={},
                                              scope=scope)
        finally:
            await db.dispose()
        ranks = {f: i + 1 for i, f in enumerate(candidates.facts)}
        return {f: (ranks.get(f), levels.get(f)) for f in fact_ids}


def _in_graph(row: dict[str, Any]) -> bool:
    return bool(row.get("integrated_at")) and not row.get("merged_into") and not row.get("retired_at")
