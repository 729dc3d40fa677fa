"""Traces from newly written facts: each fact judged against every remembered episode ("is it about it?").

Stored at the fact's time, never the time the job ran; the traces' unique index makes a retry add nothing.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from temporalio import activity

from engine.episodes import merged_spans
from engine.texts import messages_text
from engine.traces import Trace
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import episode_store, lane, trace_store

__all__ = ["score_fact_traces"]

BATCH_FACTS = 16


async def score_fact_traces(
    db: Database, judge: Judge, *, tenant_id: str, memory_id: str, fact_keys: Sequence[str]
) -> int:
    """Returns how many traces were new."""
    async with db.session() as session:
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
        if pk is None:
            return 0
        facts = await lane.facts_by_keys(session, tenant_id=tenant_id, memory_pk=pk, keys=fact_keys)
        episodes = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=pk, forgotten=False)
        # Only the remembered episodes' messages: a long memory's forgotten history is most of it.
        messages = await lane.messages_in(session, tenant_id=tenant_id, memory_pk=pk,
                                          spans=merged_spans((e.first_seq, e.last_seq) for e in episodes))
    if not facts or not episodes:
        return 0
    seqs = [m.seq for m in messages]
    texts = [messages_text(messages[bisect_left(seqs, e.first_seq):bisect_right(seqs, e.last_seq)])
             for e in episodes]
    added = 0
    for start in range(0, len(facts), BATCH_FACTS):
        batch = facts[start:start + BATCH_FACTS]
        matrix = await judge.judge_about([f.note for f in batch], texts, scope=UsageScope(tenant_id, memory_id))
        traces = [
            Trace(at=fact.at, score=verdict.score, counted=verdict.about, episode_id=episode.id, fact_id=fact.id)
            for fact, row in zip(batch, matrix, strict=True)
            for episode, verdict in zip(episodes, row, strict=True)
        ]
        async with db.session() as session, session.begin():
            added += await trace_store.add_traces(session, tenant_id=tenant_id, memory_pk=pk, traces=traces)
        activity.heartbeat(start + len(batch))
    return added
