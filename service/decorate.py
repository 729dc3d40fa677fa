"""Decorate: store what is new (taking a note the agent's history holds), let the engine plan the memory,
persist its plan, return the request to send.

One short transaction under the memory's row lock, with no model call in it: a cut uses only the boundary
scores the lane has written (docs/cutting.md). The outbox row written in the same transaction tells the
memory's workflow, after commit, that there is work.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts.errors import InvalidInput
from engine.budget import RECENT_MESSAGES
from engine.episodes import EpisodeState
from engine.messages import MessagesRequest, StoredMessage, item_kind
from engine.planning import Decided, DecoratePlan, StoredMemory, decide, finish, in_view_and_recent
from engine.recognition import (
    agent_hash,
    content_hash,
    edited_user_message,
    new_messages_start,
    recognisable_tail,
    replaced_user_message,
)
from engine.replies import answer_places, item_note_calls
from service.anthropic import unanswerable_results
from service.clock import Clock
from service.context import HotPath
from service.encoding import encode
from service.memory_cache import CachedMemory, History, MemoryContents
from service.metrics import count_cache, count_recall
from service.notes import note_answer, record_facts_written, take_note
from service.shapes import parse_request, role_of
from service.users import bind_agent, bind_user
from store.db import StoreSession
from store.records import MemoryRecord
from store.repositories import (
    boundary_store,
    episode_store,
    fact_store,
    idempotency,
    memories,
    messages,
    note_store,
    outbox,
    recall_blocks,
    size_ratios,
    trace_store,
)

log = logging.getLogger(__name__)

# A decorate this slow is logged with its breakdown: the hot path's target is well under it.
SLOW_SECONDS = 0.5

__all__ = ["decorate"]


@dataclass(frozen=True)
class _Call:
    """One decorate request as parsed, with the keys it is recognised by."""

    body: Any
    shape: str
    history: list[dict[str, Any]]
    hashes: list[str]
    body_hash: str
    key: str
    explicit_key: bool
    model: str
    # This call's id, chosen first: a user message it replaces is recorded as replaced by it.
    decorate_id: str

    @classmethod
    def of(cls, body: Any, idempotency_key: str | None, shape: str | None = None) -> _Call:
        shape, history = parse_request(body, shape=shape)
        body_hash = content_hash(body)
        if shape == "messages":
            body = MessagesRequest(body)  # the engine reads the shape from the request's type
        return cls(body=body, shape=shape, history=history, hashes=[agent_hash(m) for m in history],
                   body_hash=body_hash, key=idempotency_key or body_hash, explicit_key=idempotency_key is not None,
                   model=str(body.get("model")), decorate_id="dec_" + secrets.token_hex(12))


async def decorate(
    ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock, idempotency_key: str | None,
    shape: str | None = None, user_id: str | None = None, agent: str | None = None,
) -> bytes:
    """The one entry point of decorate, for the route and for anything else that decorates (a proxy):
    the answer's JSON (`DecorateResponse`), encoded once, so what is sent is what a retry gets back.

    Raises `InvalidInput` for a malformed body and `OverCeiling` (413) when the turn in progress alone passes
    the ceiling; either way nothing is stored. `shape` names the request's shape where its keys cannot
    (`messages` for Anthropic's; see `service.shapes.parse_request`)."""
    call = _Call.of(body, idempotency_key, shape)
    started = time.perf_counter()
    # Recall runs alongside the locked part: its searches and walk wait on Postgres and the embedder while this
    # call stores its messages, reads the memory, plans it and saves the plan. It reads only what is committed
    # (the turn before), as it would have before the lock.
    finding = asyncio.ensure_future(
        ctx.recaller.find(ctx.db, tenant_id=tenant_id, memory_id=memory_id, history=call.history, user_id=user_id)
    ) if ctx.recaller is not None else None
    try:
        async with ctx.db.session() as session, session.begin():
            memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
            locked = time.perf_counter()
            if user_id is not None:
                await bind_user(session, tenant_id=tenant_id, memory=memory, user_id=user_id)
            if agent is not None:
                bind_agent(memory, agent)
            if (replay := await _replay(session, call, tenant_id=tenant_id, memory_id=memory_id)) is not None:
                return replay
            now = clock.advance(memory.latest_at)
            history, stored = await _store_new_messages(ctx, session, call, tenant_id=tenant_id, memory=memory,
                                                        now=now)
            known = await _contents(ctx, session, tenant_id=tenant_id, memory=memory)
            read = time.perf_counter()
            # Recall counts only for a user message new in this call (a tool loop, a resent transcript or a
            # racing call reuses the turn's block). The memory is planned and saved with room kept for the
            # block while recall goes on finding it: the agent waits for the longer of the two, not both.
            coming = finding is not None and _new_user_message(stored)
            decided = await _decide(ctx, session, call, tenant_id=tenant_id, memory=memory, history=history,
                                    known=known, now=now, recall_coming=coming)
            await _save_plan(session, decided, tenant_id=tenant_id, memory=memory, now=now)
            if coming:
                # Written while recall is still finding: what is left after it is the block and the answer.
                await session.flush()
            planned = time.perf_counter()
            found = await finding if coming and finding is not None else None
            recalled = time.perf_counter()
            plan = finish(decided, found.items if found is not None else None)
            if plan.recall_block is not None and plan.recall_seq is not None and found is not None:
                recall_blocks.save_block(session, tenant_id=tenant_id, memory_pk=memory.id, turn=memory.last_turn,
                                  before_seq=plan.recall_seq, text=plan.recall_block, items=plan.recall_items,
                                  provenance=found.provenance, at=now)
            answer = _answer(session, call, plan, stored, tenant_id=tenant_id, memory=memory, now=now)
    finally:
        if finding is not None and not finding.done():
            # A replay or a failure before recall was needed: its work is not waited for.
            finding.cancel()
    # Committed: safe to reuse. A plan that changed episodes or traces moved the version; the next call reads
    # those changes (stamped after `known.version`) and nothing else.
    ctx.memory_cache.put(tenant_id, memory.id, CachedMemory(history, known, memory.history_version))
    if coming:  # committed: one recall block made for a new user message, or none
        count_recall(found.provenance if found is not None and plan.recall_block is not None else None)
    _log_if_slow(memory_id, started, locked, read, planned, recalled)
    return answer


def _log_if_slow(memory_id: str, *marks: float) -> None:
    """A decorate over `SLOW_SECONDS` says where its time went: the wait for the memory's row lock (which the
    lane's writes take too), and under it: storing the new messages and reading what changed, planning and
    saving the plan, then waiting for recall (which ran alongside all of it), and the request and answer."""
    ended = time.perf_counter()
    started, locked, read, planned, recalled = marks
    if ended - started < SLOW_SECONDS:
        return
    ms = {name: round((b - a) * 1000, 1) for name, a, b in (
        ("total_ms", started, ended), ("lock_wait_ms", started, locked), ("reading_ms", locked, read),
        ("planning_ms", read, planned), ("recall_wait_ms", planned, recalled), ("answering_ms", recalled, ended))}
    log.warning("slow decorate of %s: %s ms (waiting for the memory's lock %s, then reading %s, planning %s, "
                "waiting for recall %s, answering %s)", memory_id, *ms.values(),
                extra={"memory_id": memory_id, **ms})


async def _replay(session: StoreSession, call: _Call, *, tenant_id: str, memory_id: str) -> bytes | None:
    replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                           endpoint="decorate", key=call.key, body_hash=call.body_hash)
    if replay is None:
        return None
    # Without an explicit key, the same body after its decorate was reported is a new call (a note that was
    # all the model said leaves the agent nothing new to send), not a retry.
    if call.explicit_key or not await memories.was_reported(
            session, tenant_id=tenant_id, decorate_id=json.loads(replay.body)["decorate_id"]):
        return replay.body
    await idempotency.forget(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="decorate", key=call.key)
    return None


async def _store_new_messages(
    ctx: HotPath, session: StoreSession, call: _Call, *, tenant_id: str, memory: MemoryRecord, now: datetime
) -> tuple[History, list[StoredMessage]]:
    """Recognise what the memory already holds and store the rest, numbered, each with its user turn."""
    cached = ctx.memory_cache.get(tenant_id, memory.id)
    # Rewritten since it was cached (here or on another replica): read whole.
    kept = cached.history if cached.history_version == memory.history_version else History()
    count_cache(hit=bool(kept.messages))
    history = kept.extended(await messages.history_after(
        session, tenant_id=tenant_id, memory_pk=memory.id, after_seq=kept.last_seq))
    if call.shape == "messages":
        _check_results_answer_calls(call, history)
    users = [item_kind(m) == "user" for m in call.history]
    tail = recognisable_tail(history.held, sum(users))
    start = new_messages_start(tail, call.hashes)
    edit_of = None
    if not start and history.messages and history.messages[-1].kind == "user" and \
            (after := replaced_user_message(tail, call.hashes)) is not None:
        history, start = await _replace_last(session, call, tenant_id=tenant_id, memory=memory, history=history,
                                             now=now), after
    elif not start and (edit := edited_user_message(history.held, call.hashes, users)) is not None:
        # An earlier user message said otherwise: the conversation branches there (recorded as an edit of it).
        start, edit_of = edit[0], edit[1].seq
        await messages.branch_from(session, tenant_id=tenant_id, memory=memory, seq=edit_of)
        history = history.branched_from(edit_of)
    fresh = [
        messages.NewMessage(body=message, role=role_of(message), content_hash=content_hash(message), turn=0,
                            tokens=ctx.message_tokens(message, call.model), agent_hash=digest,
                            edit_of=edit_of if index == start else None)
        for index, (message, digest) in enumerate(zip(call.history[start:], call.hashes[start:], strict=True),
                                                  start=start)
    ]
    fresh = await _take_notes(ctx, session, call, fresh, tenant_id=tenant_id, memory=memory, now=now)
    stored, fresh = messages.append_turns(session, tenant_id=tenant_id, memory=memory, new=fresh, at=now)
    return history.extended(messages.stored_rows(stored, fresh)), stored


def _check_results_answer_calls(call: _Call, history: History) -> None:
    """A `tool_result` must answer a `tool_use` made before it: in this request, or in what the memory holds
    (an agent may send only what is new). Anthropic would refuse the request; refused here, nothing stored."""
    missing = unanswerable_results(call.history)
    if not missing:
        return
    wanted = {call_id for _, call_id in missing}
    for message in reversed(history.messages):
        wanted.difference_update(message.classified.calls)
        if not wanted:
            return
    field, call_id = next((f, c) for f, c in missing if c in wanted)
    raise InvalidInput(f"{field}: {call_id!r} answers no tool_use before it", field=field)


async def _take_notes(ctx: HotPath, session: StoreSession, call: _Call, fresh: list[messages.NewMessage], *,
                      tenant_id: str, memory: MemoryRecord, now: datetime) -> list[messages.NewMessage]:
    """A note call among the new messages is a reply whose report never came, kept whole by the agent: taken
    here as report takes it (once: a late report, or this request resent, finds it taken) before the plan,
    so the episodes it answers are acknowledged and seal as usual. Returns the messages to store."""
    calls = [note for message in fresh for note in item_note_calls(message.body)]
    if not calls:
        return fresh
    taken = await take_note(session, tenant_id=tenant_id, memory_pk=memory.id, decorate_id=call.decorate_id,
                            calls=calls, now=now)
    if not taken.calls:
        return fresh
    record_facts_written(session, tenant_id=tenant_id, memory=memory, decorate_id=call.decorate_id, taken=taken)
    await memories.reread_version(session, memory)  # the plan reads the acknowledgement and the facts
    # A note call the agent left unanswered (it never ran `note`: it does not know the tool) is answered with
    # Lethe's own result, stored as only Lethe's, as report answers it: the request stays valid without the
    # call being dropped, the model reads that its note was recorded, and the agent's resends still line up.
    # A result the agent did write (perhaps an error for a tool it lacks) stays the call's only answer: it is
    # in the agent's history, and a second one would answer the call twice.
    places = answer_places([message.body for message in fresh], [note.call_id for note in taken.calls])
    answers: dict[int, list[messages.NewMessage]] = {}
    for call_id, place in places.items():
        answers.setdefault(place, []).append(
            note_answer(ctx, call_id, call.shape, taken.result_text, model=call.model, turn=0))
    return [kept for index, message in enumerate(fresh) for kept in (message, *answers.get(index, ()))]


async def _replace_last(session: StoreSession, call: _Call, *, tenant_id: str, memory: MemoryRecord,
                        history: History, now: datetime) -> History:
    """The request replaces the last user message, which no reply followed: it leaves the history (kept as
    replaced), its block goes with it, and the decorates that brought it are superseded by this one."""
    last = history.messages[-1]
    await messages.replace_last(session, tenant_id=tenant_id, memory=memory, seq=last.seq, by=call.decorate_id,
                                at=now)
    await recall_blocks.drop_block(session, tenant_id=tenant_id, memory_pk=memory.id, before_seq=last.seq)
    await memories.supersede_unreported(session, tenant_id=tenant_id, memory=memory, by=call.decorate_id)
    return history.without_last()


async def _contents(ctx: HotPath, session: StoreSession, *, tenant_id: str, memory: MemoryRecord) -> MemoryContents:
    """The memory's episodes, facts and traces: what the gateway holds, with what changed since read."""
    known = ctx.memory_cache.get(tenant_id, memory.id).contents
    if known is not None and known.version == memory.mechanism_version:
        return known
    since = None if known is None else known.version
    facts, gone = await fact_store.changed_facts(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                changed_after=since)
    return (known or MemoryContents.empty()).updated(
        version=memory.mechanism_version,
        episodes=await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=memory.id,
                                               changed_after=since),
        traces=await trace_store.load_traces(session, tenant_id=tenant_id, memory_pk=memory.id, changed_after=since),
        merged={} if since is None else await fact_store.merged_facts(session, tenant_id=tenant_id,
                                                                     memory_pk=memory.id, changed_after=since),
        facts=facts, gone=gone,
    )


def _new_user_message(stored: list[StoredMessage]) -> bool:
    """Whether this call stored a new user message last, confirmed under the lock: only then is there a turn
    for recall to find a block for."""
    users = [message for message in stored if message.kind == "user"]
    return bool(users) and users[-1].seq == max(message.seq for message in stored)


async def _decide(
    ctx: HotPath, session: StoreSession, call: _Call, *, tenant_id: str, memory: MemoryRecord, history: History,
    known: MemoryContents, now: datetime, recall_coming: bool,
) -> Decided:
    in_view = in_view_and_recent(history.messages, known.hidden(), recent=RECENT_MESSAGES)
    blocks: dict[int, tuple[str, frozenset[int]]] = {}
    if ctx.recaller is not None and in_view:
        blocks = await recall_blocks.blocks_in_view(session, tenant_id=tenant_id, memory_pk=memory.id,
                                             from_seq=in_view[0].seq)
    # Forgotten episodes before what the engine reads hide nothing in it: a long memory's thousands stay out.
    episodes = known.episodes_from(in_view[0].seq if in_view else history.last_seq + 1)
    view = StoredMemory(
        messages=in_view, episodes=episodes, facts=known.facts, traces=known.traces_for(episodes, known.facts),
        recall_blocks={seq: text for seq, (text, _) in blocks.items()},
        recall_shown={seq: ids for seq, (_, ids) in blocks.items()},
    )
    # Only uncut history is ever cut: scores of units inside episodes are not needed.
    scores = await boundary_store.load_boundary_scores(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                  after_seq=known.covered())
    ratio = await size_ratios.ratio_for(session, tenant_id=tenant_id, memory=memory, model=call.model)
    config = await ctx.ceilings.config_for(session, ctx.config, tenant_id=tenant_id, model=call.model)
    return decide(
        call.body, view, now=now, config=config, boundary_scores=scores, count_text=ctx.text_counter(call.model),
        size_ratio=ratio, sleep_owed=memory.sleep_owed, recall_coming=recall_coming,
    )


async def _save_plan(session: StoreSession, plan: Decided, *, tenant_id: str, memory: MemoryRecord,
                     now: datetime) -> None:
    await episode_store.save_cut(session, tenant_id=tenant_id, memory_pk=memory.id, episodes=plan.new_episodes, at=now)
    await episode_store.apply_transitions(session, tenant_id=tenant_id, memory_pk=memory.id,
                                      episodes=plan.episodes, transitions=plan.transitions, at=now)
    if plan.note_ask_turns:
        leaving = [e.id for e in plan.episodes if e.state is EpisodeState.LEAVING and not e.facts_written]
        await note_store.record_note_ask(session, tenant_id=tenant_id, memory_pk=memory.id,
                                        episode_keys=leaving, at=now)
    memories.owe_sleep(memory, owed=plan.sleep_owed)


def _answer(
    session: StoreSession, call: _Call, plan: DecoratePlan, stored: list[StoredMessage], *, tenant_id: str,
    memory: MemoryRecord, now: datetime,
) -> bytes:
    """Record the call (its decoration row, the lane's event, the answer a retry gets) and encode the answer."""
    decorate_id = call.decorate_id
    memories.add_decoration(
        session, decorate_id=decorate_id, tenant_id=tenant_id, memory=memory, shape=call.shape, model=call.model,
        at=now, estimated_tokens=plan.estimated_tokens, fixed_tokens=plan.budget.fixed,
        note_ask_turns=plan.note_ask_turns,
    )
    note_ask_turns = list(plan.note_ask_turns) if plan.note_ask_turns else None
    outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="decorate", payload={
        "decorate_id": decorate_id, "messages": [message.seq for message in stored],
        "user_message": any(message.kind == "user" for message in stored), "slept": plan.slept,
        "note_ask_turns": note_ask_turns,
    })
    answer = encode({
        "decorate_id": decorate_id, "shape": call.shape, "request": plan.request, "note_ask_turns": note_ask_turns,
        "slept": plan.slept, "estimated_tokens": plan.estimated_tokens,
        "budget": {"ceiling": plan.budget.ceiling, "budget": plan.budget.budget, "landing": plan.budget.landing,
                   "view_tokens": plan.view_tokens},
    })
    idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory.memory_id, endpoint="decorate",
                                key=call.key, body_hash=call.body_hash, body=answer)
    return answer
