"""Report: store the reply, take the note call, learn the size ratio, hand the reply back without the note.

Lethe keeps the note call in the memory's history and answers it with its own tool result there, so every
later request stays valid; the agent never sees either.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from contracts.errors import Conflict
from engine.blocks.note_ask import NoteEntry, NoteReading
from engine.echoes import conversation_text, echoed
from engine.facts import Fact
from engine.recognition import content_hash
from engine.replies import note_calls, read_note, without_note_calls
from service.clock import Clock
from service.context import HotPath
from service.encoding import encode
from service.shapes import agent_reply_is_empty, parse_report, reply_items, role_of, usage_input_tokens
from store.records import EpisodeRecord
from store.repositories import (
    fact_store,
    idempotency,
    memories,
    messages,
    note_store,
    outbox,
    recall_blocks,
    size_ratios,
)

__all__ = ["report"]

log = logging.getLogger(__name__)


def _note_result(call_id: str, shape: str, text: str) -> dict[str, Any]:
    if shape == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _result_text(reading: NoteReading | None, facts: int) -> str:
    if reading is not None and not reading.taken:
        return f"Not recorded: {reading.error}. Call note again, correctly, when asked."
    return f"Recorded {facts} fact{'s' if facts != 1 else ''}." if facts else "Recorded: nothing worth keeping."


def _reply_history(
    shape: str, items: list[dict[str, Any]], agent_response: dict[str, Any]
) -> list[tuple[dict[str, Any], str | None, bool]]:
    """The reply as stored (note calls kept), each with the hash of what the agent got and whether the agent
    may have dropped it (a reply that was only a note call reaches it empty)."""
    if shape == "responses":
        visible = {content_hash(item) for item in agent_response.get("output") or []}
        return [(item, digest if (digest := content_hash(item)) in visible else None, False) for item in items]
    shown = agent_response["choices"][0]["message"]
    return [(items[0], content_hash(shown), agent_reply_is_empty(shape, agent_response))]


async def report(
    ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock, idempotency_key: str | None
) -> bytes:
    """The answer's JSON (`ReportResponse`), encoded once: what is sent is what a retry gets back."""
    request = parse_report(body)
    body_hash = content_hash(body)
    key = idempotency_key or body_hash
    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                               endpoint="report", key=key, body_hash=body_hash)
        if replay is not None:
            return replay.body
        decoration = await memories.get_decoration(session, tenant_id=tenant_id, memory=memory,
                                                   decorate_id=request.decorate_id)
        if decoration.superseded_by is not None:
            raise Conflict(f"decorate {decoration.id!r} was superseded by {decoration.superseded_by!r}: a later "
                           "request replaced its user message; report the decorate that request got")
        if decoration.reported_at is not None:
            raise Conflict(f"decorate {decoration.id!r} was already reported; each model call needs its own decorate")
        shape, response = decoration.shape, request.response
        items = reply_items(shape, response)  # validates before anything is stored
        now = clock.advance(memory.latest_at)
        agent_response = without_note_calls(response)
        # Only the first choice enters history: a note call in another would leave a result answering nothing.
        kept = response if shape == "responses" else {**response, "choices": response["choices"][:1]}
        calls = note_calls(kept)
        reading = read_note(kept)

        fact_keys = await _take_note(session, ctx, tenant_id, memory.id, decoration.id, calls, reading, now)
        new = [
            messages.NewMessage(body=item, role=role_of(item), content_hash=content_hash(item), turn=memory.last_turn,
                                tokens=ctx.message_tokens(item, decoration.model), agent_hash=agent_hash,
                                agent_optional=optional)
            for item, agent_hash, optional in _reply_history(shape, items, agent_response)
        ]
        text = _result_text(reading, len(fact_keys))
        new += [
            messages.NewMessage(body=(result := _note_result(call.call_id, shape, text)), role=role_of(result),
                                content_hash=content_hash(result), turn=memory.last_turn,
                                tokens=ctx.message_tokens(result, decoration.model), agent_hash=None)
            for call in calls
        ]
        stored = messages.append_messages(session, tenant_id=tenant_id, memory=memory, new=new, at=now)

        provider_tokens = usage_input_tokens(response)
        if decoration.model and provider_tokens:
            await size_ratios.learn(session, tenant_id=tenant_id, memory=memory, model=decoration.model,
                                    provider_tokens=provider_tokens, estimated_tokens=decoration.estimated_tokens,
                                    plausible=ctx.config.plausible_ratio, at=now)
        await memories.mark_reported(session, memory, decoration, at=now)
        outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="report", payload={
            "decorate_id": decoration.id, "messages": [message.seq for message in stored]})
        if fact_keys:
            outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="facts_written",
                             payload={"decorate_id": decoration.id, "fact_keys": fact_keys})
        answer = encode({"response": agent_response,
                         "needs_continuation": agent_reply_is_empty(shape, agent_response)})
        idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="report",
                                    key=key, body_hash=body_hash, body=answer)
    return answer


async def _take_note(
    session: Any, ctx: HotPath, tenant_id: str, memory_pk: int, decorate_id: str,
    calls: list[Any], reading: NoteReading | None, now: datetime,
) -> list[str]:
    """Keep every note call raw; when it reads well, write its facts against every episode awaiting them."""
    if not calls or reading is None:
        return []
    awaiting = await note_store.awaiting_note(session, tenant_id=tenant_id, memory_pk=memory_pk)
    keys = [row.episode_key for row in awaiting]
    first_call = await note_store.keep_note_calls(
        session, tenant_id=tenant_id, memory_pk=memory_pk, decorate_id=decorate_id, at=now, episode_keys=keys,
        calls=[(call.call_id, call.arguments) for call in calls], taken=reading.taken, error=reading.error)
    if not reading.taken:
        return []  # the episodes stay leaving; the next call asks again
    turns = [t for row in awaiting for t in (row.first_turn, row.last_turn)] or [0]
    entries = await _evidence(session, tenant_id, memory_pk, awaiting, reading.entries)
    facts = [
        Fact(id=f"{decorate_id}:{index}", note=entry.note, subject=entry.subject, object=entry.object,
             milestone=entry.milestone, episode_ids=tuple(keys), at=now, first_turn=min(turns), last_turn=max(turns),
             source=entry.source)
        for index, entry in entries
    ]
    fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=memory_pk, note_call_id=first_call, facts=facts)
    await note_store.acknowledge(session, tenant_id=tenant_id, episodes=awaiting, at=now)
    return [fact.id for fact in facts]


async def _evidence(session: Any, tenant_id: str, memory_pk: int, awaiting: Sequence[EpisodeRecord],
                    entries: Sequence[NoteEntry]) -> list[tuple[int, NoteEntry]]:
    """The entries (with their place in the note) that are evidence: one repeating, word for word, a fact of the
    facts block or a recall block still in view, and not what the noted turns said, is left out
    (`engine.echoes`)."""
    if not entries:
        return []
    first = min((row.first_seq for row in awaiting), default=None)
    last = max((row.last_seq for row in awaiting), default=0)
    held = await messages.history_after(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                        after_seq=first - 1) if first is not None else []
    noted = conversation_text(message.body for message, _ in held if message.seq <= last)
    blocks = await recall_blocks.blocks_in_view(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                                from_seq=first or 0)
    # What the facts block can show (a long memory's other facts are out of every view) and the blocks in view.
    shown = [fact.note for fact in await fact_store.load_facts(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                                               block_only=True)]
    shown += [text for text, _ in blocks.values()]
    kept = [(index, entry) for index, entry in enumerate(entries) if not echoed(entry.note, shown, noted)]
    if len(kept) < len(entries):
        log.info("note entries repeating Lethe's own blocks left out", extra={"echoes": len(entries) - len(kept)})
    return kept
