"""Scoring and cutting history in the lane: boundary scores for closed units, episodes from uncut history.

Judge calls run outside any lock; only the cut, which writes episodes, takes the memory's row lock, like the
hot path, so a cut here never races a fade in a decorate. Episode keys are deterministic (`ep-{first}-{last}`)
and inserts skip existing keys, so a retried cut inserts nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from temporalio import activity

from engine.blocks.note_ask import note_tool_chat, render_note_ask
from engine.budget import RECENT_MESSAGES, measure_turns, plan_budget
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores, covered_prefix, cut_history, uncut_runs
from engine.episodes import Episode
from engine.messages import StoredMessage
from engine.sizing import estimate_tokens
from engine.texts import CONTEXT_UNITS, unit_text
from engine.traces import encoding_trace
from engine.units import Unit, closed_units, current_turn, units_of
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import lane, mechanism, memories

__all__ = ["Cut", "cut_uncut", "episode_max", "score_units"]

BATCH_UNITS = 48


def episode_max(units: Sequence[Unit], turn: int, config: MechanismConfig) -> int:
    """The largest episode, from the budget the engine would plan now (what no fade can shrink, as far as
    the lane knows it: the note ask and its tool)."""
    fixed = estimate_tokens(render_note_ask(0, max(turn, 1))) + estimate_tokens(json.dumps(note_tool_chat()))
    in_turn = sum(u.tokens for u in units if u.turn == turn)
    measure = measure_turns(units, turn_in_progress=turn, config=config)
    budget = plan_budget(fixed=fixed, measure=measure, current_turn_tokens=in_turn, config=config)
    return config.episode_max(budget.budget)


def _turn_closing(messages: Sequence[StoredMessage], *, close_all: bool) -> int:
    # Preparing a sleep treats the last turn as over: the next user message will close it.
    return current_turn(messages) + (1 if close_all else 0)


def _cut_from(episodes: Sequence[Episode]) -> int:
    """Where the history a cut or a scoring reads begins: the start of the episode that ends the covered
    prefix, so units stay whole and the judge has context before the first uncut unit."""
    covered = covered_prefix(episodes)
    return max((e.first_seq for e in episodes if e.last_seq == covered), default=1)


async def score_units(
    db: Database, judge: Judge, *, tenant_id: str, memory_id: str, close_all: bool = False
) -> int:
    """Score closed units not yet scored nor cut; returns how many were scored."""
    async with db.session() as session:
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
        if pk is None:
            return 0
        episodes = await mechanism.load_episodes(session, tenant_id=tenant_id, memory_pk=pk)
        start = _cut_from(episodes)
        messages = await lane.uncut_and_recent(session, tenant_id=tenant_id, memory_pk=pk, from_seq=start,
                                               recent=RECENT_MESSAGES)
        scored = await mechanism.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=pk,
                                                      after_seq=start - 1)
    closed = closed_units(units_of(messages), _turn_closing(messages, close_all=close_all))
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
            (u.first_seq, u.last_seq): BoundaryScores(first=v.start, last=v.end)
            for index, u, v in zip(range(lo, hi), window, verdicts, strict=True) if index in wanted
        }
        async with db.session() as session, session.begin():
            await mechanism.save_boundary_scores(
                session, tenant_id=tenant_id, memory_pk=pk, scores=scores, judge=type(judge).__name__
            )
        done += len(scores)
        activity.heartbeat(done)
    return done


@dataclass(frozen=True)
class Cut:
    episodes: int
    uncut_tokens: int


async def cut_uncut(
    db: Database, config: MechanismConfig, *, tenant_id: str, memory_id: str,
    close_all: bool = False, min_episode_maxima: float = 0.0,
) -> Cut:
    """Cut closed, uncut history into live episodes with their encoding traces, once it holds at least
    `min_episode_maxima` episode maxima of tokens. Under the memory's row lock, like the hot path."""
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        episodes = await mechanism.load_episodes(session, tenant_id=tenant_id, memory_pk=memory.id)
        start = _cut_from(episodes)
        messages = await lane.uncut_and_recent(session, tenant_id=tenant_id, memory_pk=memory.id,
                                               from_seq=start, recent=RECENT_MESSAGES)
        units = units_of(messages)
        turn = current_turn(messages)
        runs = uncut_runs(closed_units(units, _turn_closing(messages, close_all=close_all)), episodes)
        uncut = sum(u.tokens for run in runs for u in run)
        max_tokens = episode_max(units, turn, config)
        if not runs or uncut < min_episode_maxima * max_tokens:
            return Cut(episodes=0, uncut_tokens=uncut)
        scores = await mechanism.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                      after_seq=start - 1)
        new = [
            episode
            for run in runs
            for episode in cut_history(run, scores=scores, max_tokens=max_tokens, min_units=config.episode_min_units)
        ]
        inserted = await lane.insert_episodes(
            session, tenant_id=tenant_id, memory_pk=memory.id, episodes=new, at=messages[-1].at
        )
        await mechanism.add_traces(
            session, tenant_id=tenant_id, memory_pk=memory.id,
            traces=[encoding_trace(e) for e in new if e.id in inserted],
        )
    return Cut(episodes=len(inserted), uncut_tokens=uncut)
