"""Scoring and cutting history in the lane: boundary scores for closed units, episodes from uncut history.

Judge calls run outside any lock; only the cut, which writes episodes, takes the memory's row lock, like the
hot path, so a cut here never races a fade in a decorate. The cut, its budget and its save are the hot path's
own routines (docs/cutting.md). Episode keys are deterministic (`ep-{first}-{last}`) and inserts skip
existing keys, so a retried cut inserts nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import activity

from engine.budget import RECENT_MESSAGES, budget_for
from engine.config import MechanismConfig
from engine.cutting import cut_closed, uncut_runs
from engine.episodes import Episode
from engine.messages import StoredMessage
from engine.texts import CONTEXT_UNITS, unit_text
from engine.units import closed_units, current_turn, units_of
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database, StoreSession
from store.repositories import boundary_store, episode_store, lane, memories, model_ceilings, size_ratios

__all__ = ["Cut", "cut_uncut", "score_units"]

BATCH_UNITS = 48


async def _cutting_view(
    session: StoreSession, *, tenant_id: str, memory_pk: int
) -> tuple[list[Episode], list[StoredMessage], int]:
    """What scoring and cutting read: the history from the start of the episode that ends the covered prefix
    (so units stay whole and the judge has context before the first uncut unit) and the recent messages, the
    episodes that reach into it, and where it starts. Never every episode nor every message of a long memory."""
    covered = await episode_store.covered_prefix(session, tenant_id=tenant_id, memory_pk=memory_pk)
    last = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=memory_pk, reaching=covered)
    start = max((e.first_seq for e in last if e.last_seq == covered), default=1)
    messages = await lane.uncut_and_recent(session, tenant_id=tenant_id, memory_pk=memory_pk, from_seq=start,
                                           recent=RECENT_MESSAGES)
    episodes = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                             reaching=messages[0].seq if messages else covered)
    return episodes, messages, start


async def score_units(db: Database, judge: Judge, *, tenant_id: str, memory_id: str) -> int:
    """Score closed units not yet scored nor cut, with the memory's one judge (the configured one); returns
    how many were scored. The only place boundary scores come from: the hot path never scores."""
    async with db.session() as session:
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
        if pk is None:
            return 0
        episodes, messages, start = await _cutting_view(session, tenant_id=tenant_id, memory_pk=pk)
        scored = await boundary_store.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=pk,
                                                      after_seq=start - 1)
    closed = closed_units(units_of(messages), current_turn(messages))
    uncut = {u.first_seq for run in uncut_runs(closed, episodes) for u in run}
    todo = [i for i, u in enumerate(closed) if u.first_seq in uncut and u.first_seq not in scored]
    done = 0
    for start in range(0, len(todo), BATCH_UNITS):
        batch = todo[start:start + BATCH_UNITS]
        lo, hi = max(0, batch[0] - CONTEXT_UNITS), min(len(closed), batch[-1] + 1 + CONTEXT_UNITS)
        window = closed[lo:hi]
        texts = [unit_text(messages[u.start:u.end]) for u in window]
        verdicts = await judge.score_boundaries(texts, scope=UsageScope(tenant_id, memory_id))
        wanted = set(batch)
        scores = {
            (u.first_seq, u.last_seq): v
            for index, u, v in zip(range(lo, hi), window, verdicts, strict=True) if index in wanted
        }
        async with db.session() as session, session.begin():
            await boundary_store.save_boundary_scores(
                session, tenant_id=tenant_id, memory_pk=pk, scores=scores, judge=type(judge).__name__
            )
        done += len(scores)
        if activity.in_activity():
            activity.heartbeat(done)
    return done


@dataclass(frozen=True)
class Cut:
    episodes: int
    uncut_tokens: int


async def cut_uncut(
    db: Database, config: MechanismConfig, *, tenant_id: str, memory_id: str, min_episode_maxima: float = 0.0,
) -> Cut:
    """Cut the closed, judged history no episode holds yet into live episodes, once it holds at least
    `min_episode_maxima` episode maxima of tokens: the hot path's cut (`engine.cutting.cut_closed`), by the
    budget of the memory's last decorate, saved the same way. Under the memory's row lock, like the hot path.
    The turn in progress is never cut."""
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        episodes, messages, start = await _cutting_view(session, tenant_id=tenant_id, memory_pk=memory.id)
        units = units_of(messages)
        turn = current_turn(messages)
        uncut = sum(u.tokens for run in uncut_runs(closed_units(units, turn), episodes) for u in run)
        last = await memories.latest_decoration(session, tenant_id=tenant_id, memory_pk=memory.id)
        model = last.model if last else None
        # Cut as the hot path plans: against the ceiling of the model the memory's requests go to.
        config = config.for_model(model, await model_ceilings.tenant_ceilings(session, tenant_id=tenant_id))
        budget = budget_for(units, turn=turn, fixed=last.fixed_tokens if last else 0, config=config,
                            size_ratio=await size_ratios.ratio_for(session, tenant_id=tenant_id, memory=memory,
                                                                   model=model))
        max_tokens = config.episode_max(budget.budget)
        if not uncut or uncut < min_episode_maxima * max_tokens:
            return Cut(episodes=0, uncut_tokens=uncut)
        scores = await boundary_store.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                      after_seq=start - 1)
        new = cut_closed(units, episodes, turn=turn, scores=scores, max_tokens=max_tokens,
                         min_units=config.episode_min_units)
        inserted = await episode_store.save_cut(session, tenant_id=tenant_id, memory_pk=memory.id, episodes=new,
                                            at=messages[-1].at)
    return Cut(episodes=len(inserted), uncut_tokens=uncut)
