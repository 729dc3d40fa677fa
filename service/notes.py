"""Taking a note call: the one way its facts are written, whether report finds it in the reply or decorate in
the history an agent hands it (the agent kept the reply, its report was lost).

A call is taken once: its raw row in `note_calls` says it was, so whichever of the two sees it second adds
nothing. Taking keeps the raw calls, writes the facts that are evidence against every episode awaiting a note,
and acknowledges those episodes; the caller records the `facts_written` event and answers the call in history.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.blocks.note_ask import NoteEntry, NoteReading
from engine.claims import settled_question
from engine.echoes import conversation_text, echoed
from engine.facts import Fact
from engine.recognition import content_hash
from engine.replies import NoteToolCall, read_calls
from service.context import HotPath
from service.shapes import role_of
from store.records import EpisodeRecord, MemoryRecord
from store.repositories import fact_store, messages, note_store, outbox, recall_blocks

__all__ = ["NoteTaken", "note_answer", "note_result", "record_facts_written", "take_note"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NoteTaken:
    """What taking found: the calls not taken before (none when all were), how they read, the facts written."""

    calls: tuple[NoteToolCall, ...] = ()
    reading: NoteReading | None = None
    fact_keys: tuple[str, ...] = ()

    @property
    def result_text(self) -> str:
        """Lethe's tool result for these calls, as the model will read it in history."""
        if self.reading is not None and not self.reading.taken:
            return f"Not recorded: {self.reading.error}. Call note again, correctly, when asked."
        facts = len(self.fact_keys)
        return f"Recorded {facts} fact{'s' if facts != 1 else ''}." if facts else "Recorded: nothing worth keeping."


def note_result(call_id: str, shape: str, text: str) -> dict[str, Any]:
    """Lethe's answer to a note call, in the request's shape."""
    if shape == "responses":
        return {"type": "function_call_output", "call_id": call_id, "output": text}
    if shape == "messages":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}]}
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def note_answer(ctx: HotPath, call_id: str, shape: str, text: str, *, model: str | None,
                turn: int) -> messages.NewMessage:
    """That answer as a message of the history: Lethe's only (the agent never holds it)."""
    result = note_result(call_id, shape, text)
    return messages.NewMessage(body=result, role=role_of(result), content_hash=content_hash(result), turn=turn,
                               tokens=ctx.message_tokens(result, model), agent_hash=None)


async def take_note(
    session: Any, *, tenant_id: str, memory_pk: int, decorate_id: str, calls: Sequence[NoteToolCall],
    now: datetime,
) -> NoteTaken:
    """Keep every note call not kept before raw; when they read well, write their facts against every episode
    awaiting them and acknowledge those episodes. Fact ids are `decorate_id:index`."""
    kept = await note_store.kept_note_calls(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                            calls=[(call.call_id, call.arguments) for call in calls])
    new = tuple(call for call in calls if (call.call_id, call.arguments) not in kept)
    reading = read_calls(new)
    if reading is None:
        return NoteTaken()
    awaiting = await note_store.awaiting_note(session, tenant_id=tenant_id, memory_pk=memory_pk)
    keys = [row.episode_key for row in awaiting]
    first_call = await note_store.keep_note_calls(
        session, tenant_id=tenant_id, memory_pk=memory_pk, decorate_id=decorate_id, at=now, episode_keys=keys,
        calls=[(call.call_id, call.arguments) for call in new], taken=reading.taken, error=reading.error)
    if not reading.taken:
        return NoteTaken(new, reading)  # the episodes stay leaving; the next call asks again
    turns = [t for row in awaiting for t in (row.first_turn, row.last_turn)] or [0]
    entries = await _evidence(session, tenant_id, memory_pk, awaiting, reading.entries)
    facts = [
        Fact(id=f"{decorate_id}:{index}", note=entry.note, subject=entry.subject, object=entry.object,
             milestone=entry.milestone, episode_ids=tuple(keys), at=now, first_turn=min(turns), last_turn=max(turns),
             source=entry.source, kind=entry.kind)
        for index, entry in entries
    ]
    fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=memory_pk, note_call_id=first_call, facts=facts)
    written = [(entry, fact) for (_, entry), fact in zip(entries, facts, strict=True)]
    await _settle(session, tenant_id, memory_pk, written, now)
    await note_store.acknowledge(session, tenant_id=tenant_id, episodes=awaiting, at=now)
    return NoteTaken(new, reading, tuple(fact.id for fact in facts))


async def _settle(session: Any, tenant_id: str, memory_pk: int, written: Sequence[tuple[NoteEntry, Fact]],
                  now: datetime) -> None:
    """Open questions the new facts say they settle (`settles`), this note's own questions among them."""
    if not any(entry.settles for entry, _ in written):
        return
    await session.flush()  # this note's questions are open questions too
    questions = await fact_store.open_questions(session, tenant_id=tenant_id, memory_pk=memory_pk)
    for entry, fact in written:
        if entry.settles and fact.kind != "open_question":
            question = settled_question(entry.settles, [q for q in questions if q.id != fact.id])
            if question is not None:
                await fact_store.settle_question(session, tenant_id=tenant_id, memory_pk=memory_pk,
                                                 question=question, by=fact.id, at=now)
                questions = [q for q in questions if q.id != question]


def record_facts_written(session: Any, *, tenant_id: str, memory: MemoryRecord, decorate_id: str,
                         taken: NoteTaken) -> None:
    """Tell the lane about the facts (graph, traces), in the same transaction that wrote them."""
    if taken.fact_keys:
        outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="facts_written",
                         payload={"decorate_id": decorate_id, "fact_keys": list(taken.fact_keys)})


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
