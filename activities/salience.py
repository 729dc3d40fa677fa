"""Salience in the lane: each new episode's act judged, the user's tone measured against their usual one, and
the salience that scales its encoding trace stored on it (engine/salience.py).

An episode is judged once: only episodes still unjudged are read, the judge runs outside any lock, and the acts
and the tone baseline are saved together under the memory's row lock onto episodes still unjudged, so a retry
or a worker killed mid-job judges nothing twice and folds no message twice into the baseline.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from temporalio import activity

from engine.episodes import merged_spans
from engine.salience import weigh_episodes
from engine.texts import item_text, messages_text
from engine.tone import tone_of
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import lane, memories, salience_store
from store.repositories.salience_store import Judged

__all__ = ["BATCH_EPISODES", "judge_episode_salience"]

BATCH_EPISODES = 32


async def judge_episode_salience(db: Database, judge: Judge, *, tenant_id: str, memory_id: str) -> int:
    """Judge every remembered episode not judged yet, oldest first, a batch at a time; returns how many."""
    done = 0
    while True:
        async with db.session() as session:
            pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
            if pk is None:
                return done
            episodes = await salience_store.unjudged_episodes(session, tenant_id=tenant_id, memory_pk=pk,
                                                              limit=BATCH_EPISODES)
            if not episodes:
                return done
            baseline = await salience_store.load_baseline(session, tenant_id=tenant_id, memory_pk=pk)
            # From the baseline's end (or the first episode's start, for one cut out of order) to the last one's end.
            users = await salience_store.user_messages(
                session, tenant_id=tenant_id, memory_pk=pk,
                after_seq=min(baseline.through_seq, episodes[0].first_seq - 1),
                through_seq=max(e.last_seq for e in episodes))
            messages = await lane.messages_in(session, tenant_id=tenant_id, memory_pk=pk,
                                              spans=merged_spans((e.first_seq, e.last_seq) for e in episodes))
        seqs = [m.seq for m in messages]
        texts = [messages_text(messages[bisect_left(seqs, e.first_seq):bisect_right(seqs, e.last_seq)])
                 for e in episodes]
        verdicts = await judge.judge_acts(texts, scope=UsageScope(tenant_id, memory_id))
        weighed, baseline = weigh_episodes(episodes, [v.act for v in verdicts],
                                           [(m.seq, tone_of(item_text(m.body))) for m in users], baseline)
        async with db.session() as session, session.begin():
            # The hot path's lock: acts land between two decorates, never inside one.
            await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
            done += await salience_store.save_judgments(
                session, tenant_id=tenant_id, memory_pk=pk, baseline=baseline,
                judged=[Judged(w.episode_id, w.act.value, w.intensity, w.salience) for w in weighed])
        if activity.in_activity():
            activity.heartbeat(done)
        if len(episodes) < BATCH_EPISODES:
            return done
