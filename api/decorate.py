"""Decorate: store what is new, let the engine plan the memory, persist its plan, return the request to send.

One short transaction under the memory's row lock, no model call inside it; the outbox row written in the
same transaction tells the memory's workflow, after commit, that there is work.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from api.clock import Clock
from api.context import HotPath
from api.encoding import encode
from api.memory_cache import CachedMemory, Mechanism
from api.shapes import parse_request, role_of
from engine.budget import RECENT_MESSAGES
from engine.cutting import BoundaryScores, covered_prefix
from engine.decorate import Decoration, MemoryView, in_view_and_recent
from engine.decorate import decorate as plan_decorate
from engine.episodes import EpisodeState
from engine.messages import item_kind
from engine.recognition import content_hash, new_messages_start, recognisable_tail
from engine.texts import CONTEXT_UNITS, unit_text
from engine.units import units_of
from store.repositories import idempotency, mechanism, memories, messages, outbox

__all__ = ["decorate"]

# Units a decorate may score itself before a cut, when the lane is behind: the embedded judge takes about
# 50 ms a unit on one core here (more on a busy machine), so this keeps such a call within half a second or so.
# The rest count as neutral; the lane scores every unit anyway, for the cuts after.
MAX_HOT_PATH_SCORES = 8


class _NeedsScores(Exception):  # noqa: N818 - a signal inside this module, not an error
    """A cut would fall on units the lane has not scored yet: score them outside the lock, then decorate again."""

    def __init__(self, units: list[ScoringUnit]) -> None:
        super().__init__(f"{len(units)} units need boundary scores")
        self.units = units


async def decorate(
    ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock, idempotency_key: str | None
) -> bytes:
    """The answer's JSON (`DecorateResponse`), encoded once: what is sent is what a retry gets back."""
    try:
        return await _decorate(ctx, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock,
                               idempotency_key=idempotency_key, score_first=True)
    except _NeedsScores as need:
        # The transaction rolled back whole; the scores are written, and the second attempt cuts with them.
        await _score(ctx, tenant_id=tenant_id, memory_id=memory_id, units=need.units)
        return await _decorate(ctx, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock,
                               idempotency_key=idempotency_key, score_first=False)


@dataclass(frozen=True)
class ScoringUnit:
    first_seq: int
    last_seq: int
    text: str
    context_only: bool


async def _score(ctx: HotPath, *, tenant_id: str, memory_id: str, units: list[ScoringUnit]) -> None:
    """Boundary scores from the embedded judge for a stretch about to be cut (the lane usually got there first)."""
    verdicts = await ctx.judge.score_boundaries([u.text for u in units])
    scores = {(u.first_seq, u.last_seq): BoundaryScores(first=v.start, last=v.end)
              for u, v in zip(units, verdicts, strict=True) if not u.context_only}
    async with ctx.db.session() as session, session.begin():
        # Created if new: a new memory's first decorate (an imported transcript) rolled back its own insert.
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        await mechanism.save_boundary_scores(session, tenant_id=tenant_id, memory_pk=memory.id, scores=scores,
                                             judge=type(ctx.judge).__name__)


def _unscored(plan: Decoration, view: MemoryView, scores: Mapping[int, BoundaryScores]) -> list[ScoringUnit]:
    """Units of the stretches this plan cut that have no scores yet, the newest `MAX_HOT_PATH_SCORES` of them,
    each with its text and whether it is only context for its neighbours (scored already)."""
    cut = [(e.first_seq, e.last_seq) for e in plan.new_episodes]
    if not cut:
        return []
    lo, hi = min(first for first, _ in cut), max(last for _, last in cut)
    units = units_of(view.messages)
    inside = [i for i, u in enumerate(units) if lo <= u.first_seq and u.last_seq <= hi]
    # A bounded number, the newest: a decorate must not wait on scoring a whole imported transcript; the rest
    # count as neutral, and the lane scores every unit it has not yet seen anyway.
    missing = [i for i in inside if units[i].first_seq not in scores][-MAX_HOT_PATH_SCORES:]
    if not missing:
        return []
    # The judge reads each unit with its neighbours, as in the lane: two either side of what it scores.
    first, last = max(0, missing[0] - CONTEXT_UNITS), min(len(units), missing[-1] + 1 + CONTEXT_UNITS)
    wanted = set(missing)
    return [ScoringUnit(units[i].first_seq, units[i].last_seq, unit_text(view.messages[units[i].start:units[i].end]),
                        context_only=i not in wanted)
            for i in range(first, last)]


async def _load_mechanism(session: Any, *, tenant_id: str, memory_pk: int, version: int) -> Mechanism:
    return Mechanism(
        version=version,
        episodes=await mechanism.load_episodes(session, tenant_id=tenant_id, memory_pk=memory_pk),
        facts=await mechanism.load_facts(session, tenant_id=tenant_id, memory_pk=memory_pk),
        traces=await mechanism.load_traces(session, tenant_id=tenant_id, memory_pk=memory_pk),
    )


async def _decorate(
    ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock, idempotency_key: str | None,
    score_first: bool,
) -> bytes:
    shape, body_history = parse_request(body)
    body_hash = content_hash(body)
    key = idempotency_key or body_hash
    model = str(body.get("model"))
    hashes = [content_hash(m) for m in body_history]
    decorate_id = "dec_" + secrets.token_hex(12)

    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                               endpoint="decorate", key=key, body_hash=body_hash)
        if replay is not None:
            # Without an explicit key, the same body after its decorate was reported is a new call (a note
            # that was all the model said leaves the agent nothing new to send), not a retry.
            if idempotency_key is not None or not await memories.was_reported(
                    session, tenant_id=tenant_id, decorate_id=json.loads(replay.body)["decorate_id"]):
                return replay.body
            await idempotency.forget(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="decorate", key=key)
        now = clock.advance(memory)
        cached = ctx.memories.get(tenant_id, memory.id)
        history = cached.history.extended(await messages.history_after(
            session, tenant_id=tenant_id, memory_pk=memory.id, after_seq=cached.history.last_seq))
        incoming_turns = sum(item_kind(m) == "user" for m in body_history)
        start = new_messages_start(recognisable_tail(history.held, incoming_turns), hashes)
        fresh = []
        for message, digest in zip(body_history[start:], hashes[start:], strict=True):
            if item_kind(message) == "user":
                memory.last_turn += 1
                memory.last_user_message_at = now
            fresh.append(messages.NewMessage(
                body=message, role=role_of(message), content_hash=digest, turn=memory.last_turn,
                tokens=ctx.message_tokens(message, model), agent_hash=digest,
            ))
        stored = messages.append_messages(session, tenant_id=tenant_id, memory=memory, new=fresh, at=now)
        memory.clock = now
        history = history.extended(messages.stored_rows(stored, fresh))

        known = cached.mechanism
        if known is None or known.version != memory.mechanism_version:
            known = await _load_mechanism(session, tenant_id=tenant_id, memory_pk=memory.id,
                                          version=memory.mechanism_version)
        episodes = known.episodes
        view = MemoryView(
            messages=in_view_and_recent(history.messages, episodes, recent=RECENT_MESSAGES),
            episodes=episodes, facts=known.facts, traces=known.traces,
        )
        # Only uncut history is ever cut: scores of units inside episodes are not needed.
        scores = await mechanism.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                      after_seq=covered_prefix(episodes))
        plan = plan_decorate(
            body, view, now=now, config=ctx.config, boundary_scores=scores,
            count_text=ctx.text_counter(model), size_ratio=(memory.size_ratios or {}).get(model),
            defer_unscored_turn=True,
        )
        if score_first and (unscored := _unscored(plan, view, scores)):
            raise _NeedsScores(unscored)  # no model call under the lock: leave it, score, come back

        mechanism.add_episodes(session, tenant_id=tenant_id, memory_pk=memory.id, episodes=plan.new_episodes, at=now)
        await mechanism.add_traces(session, tenant_id=tenant_id, memory_pk=memory.id, traces=plan.new_traces)
        await mechanism.apply_transitions(session, tenant_id=tenant_id, memory_pk=memory.id,
                                          episodes=plan.episodes, transitions=plan.transitions, at=now)
        leaving = [e.id for e in plan.episodes if e.state is EpisodeState.LEAVING and not e.facts_written]
        if plan.note_ask_turns:
            await mechanism.record_note_ask(session, tenant_id=tenant_id, memory_pk=memory.id,
                                            episode_keys=leaving, at=now)

        # Lethe's own count of the request: what no fade can shrink plus the view, as the engine measured them.
        estimated = plan.budget.fixed + plan.view_tokens
        memories.add_decoration(
            session, decorate_id=decorate_id, tenant_id=tenant_id, memory=memory, shape=shape, model=model,
            at=now, estimated_tokens=estimated, note_ask_turns=plan.note_ask_turns,
        )
        outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="decorate", payload={
            "decorate_id": decorate_id, "messages": [row.seq for row in stored],
            "user_message": any(m.role == "user" for m in fresh), "slept": plan.slept,
            "note_ask_turns": list(plan.note_ask_turns) if plan.note_ask_turns else None,
        })
        response = {
            "decorate_id": decorate_id, "shape": shape, "request": plan.request,
            "note_ask_turns": list(plan.note_ask_turns) if plan.note_ask_turns else None,
            "slept": plan.slept, "estimated_tokens": estimated,
            "budget": {"ceiling": plan.budget.ceiling, "budget": plan.budget.budget, "landing": plan.budget.landing,
                       "view_tokens": plan.view_tokens},
        }
        answer = encode(response)
        idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="decorate",
                                    key=key, body_hash=body_hash, body=answer)
    # Committed: safe to reuse. A plan that changed episodes or traces moved the version; the next call reloads.
    changed = plan.new_episodes or plan.transitions or plan.new_traces
    ctx.memories.put(tenant_id, memory.id, CachedMemory(history, None if changed else known))
    return answer
