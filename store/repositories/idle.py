"""The idle gate's reads and writes (issue #37, seed 004): a quiet conversation of a user hands the turns not
yet made searchable to the user's graph as passages, and moves its `idle_through_seq` in the same transaction,
so a retried or repeated gate adds nothing twice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import cast, exists, func, select, update
from sqlalchemy.dialects.postgresql import REGCONFIG, insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.messages import StoredMessage
from engine.passages import PassageText
from engine.users import feeds
from store.models import FactRow, MemoryRow, MessageRow, PassageRow
from store.models.users import UserRow
from store.repositories import memories, outbox, users
from store.repositories.lane import stored_messages
from store.repositories.user_recall import graph_memory_id

__all__ = ["QuietTurns", "idle_owed", "quiet_turns", "save_quiet_passages"]


async def idle_owed(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> bool:
    """Whether the memory is a conversation of a user holding messages after its `idle_through_seq`."""
    later = exists().where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == MemoryRow.id,
                           MessageRow.seq > MemoryRow.idle_through_seq)
    row = (await session.execute(
        select(MemoryRow.id).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_pk,
                                   MemoryRow.user_pk.is_not(None), MemoryRow.kind == "conversation", later)
    )).first()
    return row is not None


@dataclass(frozen=True)
class QuietTurns:
    """A conversation's messages after `through_seq`, and the user's graph memory they go to."""

    memory_pk: int
    memory_id: str
    graph_pk: int
    through_seq: int
    messages: list[StoredMessage]
    user_id: str = ""
    agent: str | None = None


async def quiet_turns(session: AsyncSession, *, tenant_id: str, memory_id: str) -> QuietTurns | None:
    """None when the memory has no user, its user no graph memory yet, or nothing new since the last gate."""
    row = (await session.execute(
        select(MemoryRow.id, MemoryRow.idle_through_seq, UserRow.graph_memory_pk, UserRow.user_id, MemoryRow.agent)
        .join(UserRow, (UserRow.id == MemoryRow.user_pk) & (UserRow.tenant_id == tenant_id))
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id,
               MemoryRow.kind == "conversation")
    )).one_or_none()
    if row is None:
        return None
    pk, through, graph_pk, user_id, agent = row
    if graph_pk is None:
        return None
    messages = await stored_messages(session, tenant_id=tenant_id, memory_pk=pk, first_seq=through + 1)
    if not messages:
        return None
    return QuietTurns(pk, memory_id, graph_pk, through, messages, user_id, agent)


async def save_quiet_passages(
    session: AsyncSession, *, tenant_id: str, quiet: QuietTurns, passages: Sequence[PassageText], vectors: Any,
    at: datetime, language: str, extracted: Sequence[Mapping[str, Any]] = (),
) -> int:
    """Insert the passages into the user's graph and move the conversation's `idle_through_seq` past them, in
    the caller's transaction; 0 and nothing written when another gate moved it first (the row is locked).
    `extracted`: facts a model read out of the quiet turns (note, subject, object, source, first_turn,
    last_turn); those whose source the tenant's profile lets in join the graph, for its lane to integrate."""
    current = (await session.execute(
        select(MemoryRow.idle_through_seq).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == quiet.memory_pk)
        .with_for_update())).scalar_one_or_none()
    if current is None or current != quiet.through_seq:
        return 0
    last_seq = quiet.messages[-1].seq
    added = 0
    if passages:
        # One key per conversation and first quiet message: the unique (memory, key, ordinal) index makes a
        # replay of the same quiet stretch a no-op.
        key = f"idle:{quiet.memory_pk}:{quiet.messages[0].seq}"
        values = [
            {"memory_pk": quiet.graph_pk, "tenant_id": tenant_id, "episode_key": key, "ordinal": p.ordinal,
             "first_seq": p.first_seq, "last_seq": p.last_seq, "first_turn": p.first_turn, "last_turn": p.last_turn,
             "text": p.text, "words": func.to_tsvector(cast(language, REGCONFIG), p.text.replace("\x00", " ")),
             "embedding": np.asarray(v, dtype=np.float32).tolist(), "at": at,
             "origin_memory_pk": quiet.memory_pk, "origin_memory_id": quiet.memory_id}
            for p, v in zip(passages, vectors, strict=True)
        ]
        result = await session.execute(
            insert(PassageRow).values(values)
            .on_conflict_do_nothing(index_elements=["memory_pk", "episode_key", "ordinal"]).returning(PassageRow.id))
        added = len(result.all())
    await session.execute(update(MemoryRow).where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == quiet.memory_pk)
                          .values(idle_through_seq=last_seq))
    if extracted:
        await _save_extracted(session, tenant_id, quiet, extracted, at)
    return added


async def _save_extracted(session: AsyncSession, tenant_id: str, quiet: QuietTurns,
                          extracted: Sequence[Mapping[str, Any]], at: datetime) -> None:
    in_force = await users.profile(session, tenant_id=tenant_id)
    # Keyed by the conversation and the quiet stretch's first message: a replay adds nothing (the origin index).
    key = f"idle:{quiet.memory_pk}:{quiet.messages[0].seq}"
    rows = [{"memory_pk": quiet.graph_pk, "tenant_id": tenant_id, "fact_key": f"{key}:{i}", "note": f["note"],
             "subject": f["subject"], "object": f["object"], "milestone": False, "episode_keys": [],
             "first_turn": f["first_turn"], "last_turn": f["last_turn"], "at": at, "valid_from": at,
             "source": f["source"], "kind": "fact", "origin_memory_pk": quiet.memory_pk,
             "origin_memory_id": quiet.memory_id, "origin_fact_key": f"{key}:{i}"}
            for i, f in enumerate(extracted) if feeds(in_force, f["source"], quiet.agent)]
    if not rows:
        return
    result = await session.execute(
        insert(FactRow).values(rows)
        .on_conflict_do_nothing(index_elements=["memory_pk", "origin_memory_id", "origin_fact_key"],
                                index_where=FactRow.origin_fact_key.is_not(None)).returning(FactRow.id))
    new = len(result.all())
    if new:
        graph = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=graph_memory_id(quiet.user_id),
                                           create=False)
        outbox.add_event(session, tenant_id=tenant_id, memory=graph, kind=users.FED_EVENT,
                         payload={"from": quiet.memory_id, "facts": new, "extracted": True})
