"""A memory's facts managed by its user: search them as recall does, add one, correct one, forget one.

An added or corrected fact is written as a note's facts are (`fact_store.add_facts` and a `facts_written` event),
so the memory's lane brings it into the graph: entities, merges of a restatement, retirement of what it
contradicts. Its `source` is `api`. A correction retires the fact it corrects at once, named by the new one, as a
contradiction would; a forgotten fact is retired as `forgotten` and never found or shown again, yet kept (marked)
in the export; an erased one leaves no row.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any

from contracts.errors import Conflict, InvalidInput, NotFound
from engine.facts import KINDS, Fact
from engine.recall.parts import split_parts
from engine.recognition import content_hash
from recall.config import RecallConfig
from recall.deadline import Progress
from recall.find import Recaller
from recall.search import MessageSearch
from service.clock import Clock
from service.context import HotPath
from service.encoding import encode
from store.db import Database
from store.records import MemoryRecord
from store.repositories import fact_edits, fact_store, idempotency, memories, outbox, recall_reads, users
from store.repositories.fact_edits import FactRecord
from store.repositories.recall_search import Searched, search_by_words

__all__ = ["MAX_NAME", "MAX_NOTE", "MAX_QUERY", "MAX_SEARCH", "add", "correct", "forget", "search"]

SOURCE = "api"
MAX_NOTE = 4000  # characters: a fact is a sentence that reads alone, not a document
MAX_NAME = 400
MAX_SEARCH = 20  # each of recall's searches ranks this many (`Searched.limit`)
MAX_QUERY = 2000


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _shown(fact: FactRecord) -> dict[str, Any]:
    return {"id": fact.key, "note": fact.note, "subject": fact.subject, "object": fact.object,
            "milestone": fact.milestone, "source": fact.source, "at": fact.at.isoformat(),
            "valid_from": fact.valid_from.isoformat(), "retired_at": _iso(fact.retired_at),
            "retired_by": fact.retired_by, "claim_kind": fact.kind, "settled_by": fact.settled_by,
            "retired_as": fact.retired_as, **({"origin_memory_id": fact.origin_memory_id}
                                               if fact.origin_memory_id else {})}


def _text(body: dict[str, Any], name: str, *, limit: int, required: bool) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise InvalidInput(f"{name}: required", field=name)
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name}: must be a string", field=name)
    value = value.strip()
    if not value:
        raise InvalidInput(f"{name}: must not be empty", field=name)
    if len(value) > limit:
        raise InvalidInput(f"{name}: at most {limit} characters", field=name)
    return value


def _entry(body: Any, *, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The body's fields, checked as the note tool's entry is (`engine.blocks.note_ask`): a note that reads
    alone, the two entities it links, whether it is a milestone."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", field="body")
    for name in body:
        if name not in allowed:
            raise InvalidInput(f"{name}: not a field of this call (it takes {', '.join(allowed)})", field=name)
    entry: dict[str, Any] = {"note": _text(body, "note", limit=MAX_NOTE, required=True)}
    for name in ("subject", "object"):
        if name in allowed:
            entry[name] = _text(body, name, limit=MAX_NAME, required=name in required)
    milestone = body.get("milestone")
    if milestone is not None and not isinstance(milestone, bool):
        raise InvalidInput("milestone: must be true or false", field="milestone")
    entry["milestone"] = milestone
    kind = body.get("kind")
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind: one of {', '.join(KINDS)}", field="kind")
    entry["kind"] = kind
    return entry


async def search(ctx: HotPath, *, tenant_id: str, memory_id: str, query: str, limit: int) -> dict[str, Any]:
    """The memory's facts in force, then its passages, as recall's searches rank them (reciprocal rank fusion of
    the searches by words and by meaning), best first, `limit` in all."""
    if not query.strip():
        raise InvalidInput("q: must not be empty", field="q")
    if len(query) > MAX_QUERY:
        raise InvalidInput(f"q: at most {MAX_QUERY} characters", field="q")
    async with ctx.db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        by_words = None if ctx.recaller else await _searched_by_words(session, tenant_id, memory.id, query)
    searched = by_words if ctx.recaller is None else await _searched(ctx.db, ctx.recaller, tenant_id, memory_id,
                                                                     query)
    found = searched.candidates() if searched else None
    fact_scores, passage_scores = (found.fact_scores, found.passage_scores) if found else ({}, {})
    async with ctx.db.session() as session:
        facts = await fact_edits.facts_in_force(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                ids=list(fact_scores))
        passages = await recall_reads.passages_by_ids(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                      ids=list(passage_scores))
    hits = [{"kind": "fact", **_shown(facts[i]), "score": round(s, 6)} for i, s in fact_scores.items() if i in facts]
    hits += [{"kind": "passage", "id": p.id, "text": p.text, "first_turn": p.first_turn, "last_turn": p.last_turn,
              "at": p.at.isoformat(), "score": round(passage_scores[i], 6)}
             for i in passage_scores if (p := passages.get(i)) is not None]
    return {"memory_id": memory_id, "query": query, "results": hits[:limit]}


async def _searched(db: Database, recaller: Recaller, tenant_id: str, memory_id: str, query: str
                    ) -> Searched | None:
    """Recall's own searches for the query as if it were a new user message (no deadline: the caller waits)."""
    progress = Progress()
    message = MessageSearch(recaller.embedder, recaller.config, tenant_id=tenant_id, memory_id=memory_id,
                            text=query, progress=progress, barren={}, pks={})
    async with db.session() as session, db.session() as passages_session:
        found = await message.run(session, passages_session, [{"role": "user", "content": query}])
    if found is None:
        return None
    return progress.searched


async def add(ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock,
              idempotency_key: str | None, owner: dict[str, str] | None = None) -> bytes:
    """Write the fact as a note's are and answer its id (`FactWritten`); the lane integrates it."""
    entry = _entry(body, allowed=("note", "subject", "object", "milestone", "kind"), required=("subject", "object"))
    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        if idempotency_key is not None:
            replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                                   endpoint="fact_add", key=idempotency_key,
                                                   body_hash=content_hash(body))
            if replay is not None:
                return replay.body
        now = clock.advance(memory.latest_at)
        # Not from any episode: recalled when it bears on a message, not listed in the facts block (which holds
        # what leaving episodes left behind), unless it is a constraint, which stays there (engine.claims).
        fact = Fact(id=_new_key(), note=entry["note"], subject=entry["subject"], object=entry["object"],
                    milestone=bool(entry["milestone"]), episode_ids=(), at=now, first_turn=memory.last_turn,
                    last_turn=memory.last_turn, source=SOURCE, kind=entry["kind"] or "fact")
        answer = _written(session, tenant_id, memory, fact, owner=owner)
        if idempotency_key is not None:
            idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="fact_add",
                                        key=idempotency_key, body_hash=content_hash(body), body=answer,
                                        status_code=201)
    return answer


async def correct(ctx: HotPath, *, tenant_id: str, memory_id: str, fact_id: str, body: Any, clock: Clock,
                  idempotency_key: str | None, owner: dict[str, str] | None = None) -> bytes:
    """A new fact in place of this one (its episodes and turns, so it stands where the old one stood, in the
    facts block too), the old one retired by it at once."""
    entry = _entry(body, allowed=("note", "subject", "object", "milestone", "kind"), required=())
    body_hash = content_hash({"fact": fact_id, "body": body})  # one key, one fact
    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        if idempotency_key is not None:
            replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                                   endpoint="fact_correct", key=idempotency_key, body_hash=body_hash)
            if replay is not None:
                return replay.body
        old = await _found(session, tenant_id, memory.id, fact_id)
        if old.retired_at is not None or old.merged_into is not None:
            standing = old.merged_into or old.retired_by
            raise Conflict(f"fact {fact_id!r} is no longer in force ({_why(old)}); only a fact in force can be "
                           + (f"corrected: correct {standing!r}" if standing != fact_edits.FORGOTTEN else "corrected"))
        now = clock.advance(memory.latest_at)
        fact = Fact(id=_new_key(), note=entry["note"], subject=entry["subject"] or old.subject,
                    object=entry["object"] or old.object,
                    milestone=old.milestone if entry["milestone"] is None else entry["milestone"],
                    episode_ids=old.episode_keys, at=now, first_turn=old.first_turn, last_turn=old.last_turn,
                    source=SOURCE, kind=entry["kind"] or old.kind)
        answer = _written(session, tenant_id, memory, fact, corrects=old.key, owner=owner)
        await fact_edits.retire_fact(session, tenant_id=tenant_id, memory_pk=memory.id, key=old.key, by=fact.id,
                                     at=now)
        if idempotency_key is not None:
            idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="fact_correct",
                                        key=idempotency_key, body_hash=body_hash, body=answer, status_code=201)
    return answer


async def forget(ctx: HotPath, *, tenant_id: str, memory_id: str, fact_id: str, erase: bool, clock: Clock
                 ) -> dict[str, Any]:
    """Forget the fact (retired as forgotten, kept for the export) or, with `erase`, delete it outright."""
    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        fact = await _found(session, tenant_id, memory.id, fact_id)
        at = clock.advance(memory.latest_at)
        keys = await _forget(session, tenant_id, memory.id, fact.key, erase=erase, at=at)
        # The same fact in the user's graph (or, from the graph, in the conversation it came from) goes too:
        # what a user forgets is not recalled in another conversation, nor fed back.
        linked = await users.linked_facts(session, tenant_id=tenant_id, memory_pk=memory.id, keys=keys)
        for memory_pk, key in linked:
            await _forget(session, tenant_id, memory_pk, key, erase=erase, at=at)
    if erase:
        # A deleted row moves no change stamp, so what this gateway keeps of the memory is read again whole.
        for memory_pk in {memory.id, *(pk for pk, _ in linked)}:
            cached = ctx.memory_cache.get(tenant_id, memory_pk)
            ctx.memory_cache.put(tenant_id, memory_pk, replace(cached, contents=None))
    return {"memory_id": memory_id, "id": fact.key, "done": "erased" if erase else "forgotten",
            "facts": keys}


async def _forget(session: Any, tenant_id: str, memory_pk: int, key: str, *, erase: bool, at: datetime
                  ) -> list[str]:
    if erase:
        return await fact_edits.erase_fact(session, tenant_id=tenant_id, memory_pk=memory_pk, key=key)
    return await fact_edits.forget_fact(session, tenant_id=tenant_id, memory_pk=memory_pk, key=key, at=at)


async def _searched_by_words(session: Any, tenant_id: str, memory_pk: int, query: str) -> Searched:
    """With recall off (no embedder in this gateway), recall's searches by words alone, fused the same way."""
    parts = split_parts(query)
    scored = Searched()
    await search_by_words(session, tenant_id=tenant_id, memory_pk=memory_pk, texts=[query],
                          parts=parts if len(parts) > 1 else [], language=RecallConfig().language, into=scored)
    return scored


def _new_key() -> str:
    return "api_" + secrets.token_hex(12)


def _why(fact: FactRecord) -> str:
    if fact.merged_into is not None:
        return f"it restates {fact.merged_into!r}"
    if fact.retired_by == fact_edits.FORGOTTEN:
        return "it was forgotten"
    return f"it was retired by {fact.retired_by!r}"


async def _found(session: Any, tenant_id: str, memory_pk: int, fact_id: str) -> FactRecord:
    fact = await fact_edits.fact_record(session, tenant_id=tenant_id, memory_pk=memory_pk, key=fact_id)
    if fact is None:
        raise NotFound(f"no fact {fact_id!r} in this memory")
    return fact


def _written(session: Any, tenant_id: str, memory: MemoryRecord, fact: Fact, corrects: str | None = None,
             owner: dict[str, str] | None = None) -> bytes:
    """Write the fact and tell the lane; the answer names its owner (the memory, or the user of a graph)."""
    fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=memory.id, note_call_id=None, facts=[fact])
    outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="facts_written",
                     payload={"fact_keys": [fact.id]})
    return encode({**(owner or {"memory_id": memory.memory_id}), "id": fact.id, "note": fact.note,
                   "subject": fact.subject, "object": fact.object, "milestone": fact.milestone,
                   "source": fact.source, "kind": fact.kind, "at": fact.at.isoformat(), "corrects": corrects})
