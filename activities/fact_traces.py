"""Traces from newly written facts: each fact judged against every remembered episode ("is it about it?").

Stored at the fact's time, never the time the job ran; the traces' unique index makes a retry add nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import activity

from engine.episodes import EpisodeState
from engine.texts import messages_text
from engine.traces import Trace
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import lane, mechanism

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
        episodes = [e for e in await mechanism.load_episodes(session, tenant_id=tenant_id, memory_pk=pk)
                    if e.state is not EpisodeState.FORGOTTEN]
        messages = await lane.stored_messages(session, tenant_id=tenant_id, memory_pk=pk)
    if not facts or not episodes:
        return 0
    # Seqs run without gaps from the first message, so each episode's messages are one slice.
    base = messages[0].seq if messages else 1
    texts = [messages_text(messages[e.first_seq - base:e.last_seq - base + 1]) for e in episodes]
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
            added += await mechanism.add_traces(session, tenant_id=tenant_id, memory_pk=pk, traces=traces)
        activity.heartbeat(start + len(batch))
    return added
