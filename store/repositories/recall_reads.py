"""What recall reads of a memory: where it stands, its messages by turn, and the facts and passages a
block holds, by id.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Select, and_, bindparam, exists, func, join, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.messages import StoredMessage
from engine.recall.grouping import RecalledFact, RecalledPassage
from store.models import EntityRow, FactRow, MemoryRow, MessageRow, PassageRow, RecallWalkRow
from store.repositories.recall_blocks import levels_from_json

__all__ = [
    "RecallStart",
    "facts_by_ids",
    "has_facts",
    "memory_turn",
    "passages_by_ids",
    "recall_start",
    "turn_messages",
    "usable_facts",
]


def usable_facts() -> Any:
    # Facts the graph holds: integrated, not folded into another (a retired one stays, for its earlier value).
    return and_(FactRow.integrated_at.is_not(None), FactRow.merged_into.is_(None))


async def memory_turn(session: AsyncSession, *, tenant_id: str, memory_id: str) -> tuple[int, int] | None:
    """(pk, last turn) of the memory, read without its lock (recall searches before taking it)."""
    row = (await session.execute(
        select(MemoryRow.id, MemoryRow.last_turn).where(MemoryRow.tenant_id == tenant_id,
                                                        MemoryRow.memory_id == memory_id)
    )).one_or_none()
    return None if row is None else (row[0], row[1])


@dataclass(frozen=True)
class RecallStart:
    """What recall reads of a memory before searching: its pk and last turn, whether it holds anything to
    recall, and the lane's prepared walk for the next turn (None: none ready)."""

    pk: int
    last_turn: int
    recallable: bool
    prepared: dict[int, int] | None


async def recall_start(session: AsyncSession, *, tenant_id: str, memory_id: str) -> RecallStart | None:
    """The memory's pk and last turn, whether it holds anything recall could find, and the walk prepared for
    its next message, in one round trip (the hot path's first read)."""
    row = (await session.execute(_start_statement(), {"tenant_id": tenant_id, "memory_id": memory_id})).one_or_none()
    if row is None:
        return None
    pk, last_turn, recallable, levels = row
    return RecallStart(pk, last_turn, bool(recallable), levels_from_json(levels))


@functools.cache
def _start_statement() -> Select[Any]:
    """Built once, as the hot path's other reads are (`_facts_statement`)."""
    tenant_id = bindparam("tenant_id")
    facts = exists().where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == MemoryRow.id, usable_facts())
    passages = exists().where(PassageRow.tenant_id == tenant_id, PassageRow.memory_pk == MemoryRow.id)
    walk = (select(RecallWalkRow.levels)
            .where(RecallWalkRow.tenant_id == tenant_id, RecallWalkRow.memory_pk == MemoryRow.id,
                   RecallWalkRow.for_turn == MemoryRow.last_turn + 1).scalar_subquery())
    return (select(MemoryRow.id, MemoryRow.last_turn, or_(facts, passages), walk)
            .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == bindparam("memory_id")))



async def turn_messages(session: AsyncSession, *, tenant_id: str, memory_pk: int, first_turn: int,
                        last_turn: int) -> list[StoredMessage]:
    """The messages of these turns, in seq order."""
    rows = await session.execute(
        select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens)
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk, MessageRow.turn >= first_turn,
               MessageRow.turn <= last_turn).order_by(MessageRow.seq))
    return [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]


async def has_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> bool:
    """Whether the memory's graph holds a fact to walk: the lane prepares no walk before the first one."""
    facts = exists().where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, usable_facts())
    return bool((await session.execute(select(facts))).scalar())


async def facts_by_ids(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                       ) -> dict[int, RecalledFact]:
    """The facts, their entities under canonical names, and for each retired one the fact that replaced it
    (keyed by its id too), so an earlier value is never shown alone."""
    found = await _facts(session, tenant_id, memory_pk, "id", list(ids))
    replacements = [f.retired_by for f in found.values() if f.retired_by]
    if replacements:
        found.update(await _facts(session, tenant_id, memory_pk, "fact_key", replacements))
    return found


@functools.cache
def _facts_statement(by: str) -> Select[Any]:
    """Facts by id or by key, built once (the hot path's recall fetches with it; building its aliased joins cost
    as much as running it)."""
    subject, obj = aliased(EntityRow), aliased(EntityRow)
    column = FactRow.id if by == "id" else FactRow.fact_key
    return (
        select(FactRow.id, FactRow.fact_key, FactRow.note, func.coalesce(subject.name, FactRow.subject),
               func.coalesce(obj.name, FactRow.object), FactRow.at, FactRow.first_turn, FactRow.last_turn,
               FactRow.retired_by, FactRow.retired_as, FactRow.origin_memory_pk)
        .outerjoin(subject, subject.id == FactRow.subject_entity_id)
        .outerjoin(obj, obj.id == FactRow.object_entity_id)
        .where(FactRow.tenant_id == bindparam("tenant_id"), FactRow.memory_pk == bindparam("memory_pk"), usable_facts(),
               column.in_(bindparam("values", expanding=True)))
    )


async def _facts(session: AsyncSession, tenant_id: str, memory_pk: int, by: str, values: Sequence[Any]
                 ) -> dict[int, RecalledFact]:
    rows = await session.execute(_facts_statement(by), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                         "values": list(values)})
    return {i: RecalledFact(key=key, id=i, note=note, subject=s, object=o, at=at, first_turn=first,
                            last_turn=last, retired_by=retired_by, retired_as=retired_as, origin_pk=origin)
            for i, key, note, s, o, at, first, last, retired_by, retired_as, origin in rows}


async def passages_by_ids(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                          ) -> dict[int, RecalledPassage]:
    """The passages, each with the facts in force that replaced a claim made in its turns (`since`)."""
    if not ids:
        return {}
    rows = await session.execute(_passages_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                          "ids": list(ids)})
    found: dict[int, RecalledPassage] = {}
    since: dict[int, dict[str, RecalledFact]] = {}
    for i, t, a, b, at, origin, key, fact_id, note, subject, obj, fact_at, first, last in rows:
        found.setdefault(i, RecalledPassage(id=i, text=t, first_turn=a, last_turn=b, at=at, origin_pk=origin))
        if key is not None:
            since.setdefault(i, {}).setdefault(key, RecalledFact(
                key=key, id=fact_id, note=note, subject=subject, object=obj, at=fact_at, first_turn=first,
                last_turn=last))
    return {i: replace(p, since=tuple(since[i].values())) if i in since else p for i, p in found.items()}


@functools.cache
def _passages_statement() -> Select[Any]:
    """The passages by id, each joined to the facts in force that replaced a claim noted from its turns about
    something it names (the retired fact's subject or object in its text): an excerpt quoting an earlier value
    is then shown with the value that replaced it, as a retired fact is. One statement: the hot path reads it."""
    old, new = aliased(FactRow), aliased(FactRow)
    names = or_(func.strpos(func.lower(PassageRow.text), func.lower(old.subject)) > 0,
                func.strpos(func.lower(PassageRow.text), func.lower(old.object)) > 0)
    replaced = join(old, new, and_(new.memory_pk == old.memory_pk, new.fact_key == old.retired_by,
                                   new.retired_by.is_(None), new.merged_into.is_(None)))
    return (
        select(PassageRow.id, PassageRow.text, PassageRow.first_turn, PassageRow.last_turn, PassageRow.at,
               PassageRow.origin_memory_pk, new.fact_key, new.id, new.note, new.subject, new.object, new.at,
               new.first_turn, new.last_turn)
        .outerjoin(replaced, and_(old.tenant_id == PassageRow.tenant_id, old.memory_pk == PassageRow.memory_pk,
                                  old.retired_by.is_not(None), old.merged_into.is_(None),
                                  old.first_turn <= PassageRow.last_turn, old.last_turn >= PassageRow.first_turn,
                                  names))
        .where(PassageRow.tenant_id == bindparam("tenant_id"), PassageRow.memory_pk == bindparam("memory_pk"),
               PassageRow.id.in_(bindparam("ids", expanding=True)))
        .order_by(PassageRow.id, new.id)
    )
