"""Recall's reads and writes: the facts and passages a block holds, the graph's neighbours for the walk,
each turn's recall block (placed, then distilled), and the walk the lane prepared for the next message.

Every write is safe to repeat: a turn's block and a turn's prepared walk are written once, distill once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import REAL, Select, and_, bindparam, cast, exists, func, or_, select, update
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.messages import StoredMessage
from engine.recall.grouping import Recalled, RecalledFact, RecalledPassage
from store.models import Entity, Memory, Message, Passage, RecallBlock, RecallWalk
from store.models import Fact as FactRow
from store.query_vectors import query_vector

__all__ = [
    "BlockRow",
    "RatingTexts",
    "RecallStart",
    "blocks_in_view",
    "bridges",
    "distill_block",
    "facts_by_ids",
    "has_facts",
    "items_from_json",
    "items_to_json",
    "memory_turn",
    "neighbours",
    "passage_rating_texts",
    "passages_by_ids",
    "prepared_walk",
    "recall_blocks",
    "recall_start",
    "save_block",
    "save_walk",
    "turn_messages",
]


@dataclass(frozen=True)
class BlockRow:
    turn: int
    before_seq: int
    text: str
    items: list[Recalled]
    provenance: str
    at: datetime
    distilled_text: str | None
    removed: bool
    distilled_at: datetime | None
    fact_ids: list[int]
    passage_ids: list[int]
    distilled_fact_ids: list[int] | None
    distilled_passage_ids: list[int] | None


# How many of the newest facts across the best hits' entities a bridge is chosen from.
BRIDGE_REACH = 256


def _usable() -> Any:
    # Facts the graph holds: integrated, not folded into another (a retired one stays, for its earlier value).
    return and_(FactRow.integrated_at.is_not(None), FactRow.merged_into.is_(None))


async def memory_turn(session: AsyncSession, *, tenant_id: str, memory_id: str) -> tuple[int, int] | None:
    """(pk, last turn) of the memory, read without its lock (recall searches before taking it)."""
    row = (await session.execute(
        select(Memory.id, Memory.last_turn).where(Memory.tenant_id == tenant_id, Memory.memory_id == memory_id)
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
    return RecallStart(pk, last_turn, bool(recallable), _levels(levels))


@functools.cache
def _start_statement() -> Select[Any]:
    """Built once, as the hot path's other reads are (`_facts_statement`)."""
    tenant_id = bindparam("tenant_id")
    facts = exists().where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == Memory.id, _usable())
    passages = exists().where(Passage.tenant_id == tenant_id, Passage.memory_pk == Memory.id)
    walk = (select(RecallWalk.levels)
            .where(RecallWalk.tenant_id == tenant_id, RecallWalk.memory_pk == Memory.id,
                   RecallWalk.for_turn == Memory.last_turn + 1).scalar_subquery())
    return (select(Memory.id, Memory.last_turn, or_(facts, passages), walk)
            .where(Memory.tenant_id == tenant_id, Memory.memory_id == bindparam("memory_id")))


def _levels(levels: list[list[int]] | None) -> dict[int, int] | None:
    # A list of pairs, not an object: JSONB keeps no key order.
    return None if levels is None else {int(k): int(v) for k, v in levels}


async def turn_messages(session: AsyncSession, *, tenant_id: str, memory_pk: int, first_turn: int,
                        last_turn: int) -> list[StoredMessage]:
    """The messages of these turns, in seq order."""
    rows = await session.execute(
        select(Message.seq, Message.turn, Message.at, Message.body, Message.tokens)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk, Message.turn >= first_turn,
               Message.turn <= last_turn).order_by(Message.seq))
    return [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]


async def has_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> bool:
    """Whether the memory's graph holds a fact to walk: the lane prepares no walk before the first one."""
    facts = exists().where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, _usable())
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
    subject, obj = aliased(Entity), aliased(Entity)
    column = FactRow.id if by == "id" else FactRow.fact_key
    return (
        select(FactRow.id, FactRow.fact_key, FactRow.note, func.coalesce(subject.name, FactRow.subject),
               func.coalesce(obj.name, FactRow.object), FactRow.at, FactRow.first_turn, FactRow.last_turn,
               FactRow.retired_by)
        .outerjoin(subject, subject.id == FactRow.subject_entity_id)
        .outerjoin(obj, obj.id == FactRow.object_entity_id)
        .where(FactRow.tenant_id == bindparam("tenant_id"), FactRow.memory_pk == bindparam("memory_pk"), _usable(),
               column.in_(bindparam("values", expanding=True)))
    )


async def _facts(session: AsyncSession, tenant_id: str, memory_pk: int, by: str, values: Sequence[Any]
                 ) -> dict[int, RecalledFact]:
    rows = await session.execute(_facts_statement(by), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                         "values": list(values)})
    return {i: RecalledFact(key=key, id=i, note=note, subject=s, object=o, at=at, first_turn=first,
                            last_turn=last, retired_by=retired_by)
            for i, key, note, s, o, at, first, last, retired_by in rows}


@dataclass(frozen=True)
class RatingTexts:
    """What the judge reads to rate some facts: the context, each fact's sentence ("" for one gone meanwhile),
    and the vector stored with each sentence (the embedder made it when the fact joined the graph)."""

    context: str
    notes: list[str]
    vectors: Mapping[str, Sequence[float]]


async def rating_texts(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int],
                       via: Sequence[int], dialogue: str) -> RatingTexts:
    """The dialogue (with the facts that led the walk to these, when any) and the facts' sentences."""
    rows = (await session.execute(_rating_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                         "ids": [*ids, *via]})).all()
    notes = {i: note for i, note, _ in rows}
    if via:
        # One note a line, as it was written: a judge that reads the context by its lines finds them as stored.
        bridges = "\n".join(notes[i] for i in via if i in notes)
        dialogue = f"{dialogue}\n\nKnown from earlier in this conversation:\n{bridges}"
    vectors = {note: vector for _, note, vector in rows if vector is not None}
    return RatingTexts(dialogue, [notes.get(i, "") for i in ids], vectors)


def _as_floats(embedding: Any) -> Any:
    """A stored vector read as `real[]`: the driver decodes that array itself, where the `vector` type is parsed
    from its text one number at a time in Python (sixteen facts' vectors cost milliseconds a step of the walk)."""
    return cast(embedding, ARRAY(REAL)).label("embedding")


@functools.cache
def _rating_statement() -> Select[Any]:
    return (select(FactRow.id, FactRow.note, _as_floats(FactRow.embedding))
            .where(FactRow.tenant_id == bindparam("tenant_id"), FactRow.memory_pk == bindparam("memory_pk"),
                   _usable(), FactRow.id.in_(bindparam("ids", expanding=True))))


async def neighbours(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_ids: Sequence[int],
                     limit: int = 32) -> list[int]:
    """Current facts across the entities of these facts (the walk's next level), newest first."""
    if not fact_ids:
        return []
    rows = await session.execute(_neighbours_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                            "ids": list(fact_ids), "limit": limit})
    return list(rows.scalars())


@functools.cache
def _neighbours_statement() -> Select[Any]:
    """One round trip: the entities of the facts, then the current facts on them."""
    tenant_id, memory_pk = bindparam("tenant_id"), bindparam("memory_pk")
    ids = bindparam("ids", expanding=True)
    ends = (select(FactRow.subject_entity_id.label("entity"))
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))
            .union(select(FactRow.object_entity_id)
                   .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))))
    return (select(FactRow.id)
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, _usable(),
                   FactRow.retired_at.is_(None), FactRow.id.not_in(ids),
                   or_(FactRow.subject_entity_id.in_(ends), FactRow.object_entity_id.in_(ends)))
            .order_by(FactRow.id.desc()).limit(bindparam("limit")))


async def bridges(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_ids: Sequence[int], vector: Any,
                  limit: int, reach: int = BRIDGE_REACH) -> list[int]:
    """Current facts one step across the entities of these facts, nearest in meaning to `vector` first: the
    bridge a two-hop question needs, found without the judge. Of an entity's facts the newest `reach` are
    weighed (an entity a thousand facts hang on would otherwise cost a distance to each)."""
    if not fact_ids or limit < 1:
        return []
    rows = await session.execute(_bridges_statement(), {
        "tenant_id": tenant_id, "memory_pk": memory_pk, "ids": list(fact_ids), "vector": vector, "limit": limit,
        "reach": reach})
    return list(rows.scalars())


@functools.cache
def _bridges_statement() -> Select[Any]:
    tenant_id, memory_pk = bindparam("tenant_id"), bindparam("memory_pk")
    ids = bindparam("ids", expanding=True)
    ends = (select(FactRow.subject_entity_id.label("entity"))
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))
            .union(select(FactRow.object_entity_id)
                   .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id.in_(ids))))
    near = (select(FactRow.id, FactRow.embedding)
            .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, _usable(),
                   FactRow.retired_at.is_(None), FactRow.id.not_in(ids), FactRow.embedding.is_not(None),
                   or_(FactRow.subject_entity_id.in_(ends), FactRow.object_entity_id.in_(ends)))
            .order_by(FactRow.id.desc()).limit(bindparam("reach")).subquery("near"))
    distance = near.c.embedding.cosine_distance(query_vector("vector", FactRow.embedding.type.dim))
    return select(near.c.id).order_by(distance, near.c.id.desc()).limit(bindparam("limit"))


async def passage_rating_texts(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                               ) -> tuple[list[str], dict[str, Sequence[float]]]:
    """What the judge reads to rate these passages ("" for one gone meanwhile), and the vector stored with each
    (the embedder made it when the passage was cut)."""
    rows = (await session.execute(
        select(Passage.id, Passage.text, _as_floats(Passage.embedding))
        .where(Passage.tenant_id == tenant_id, Passage.memory_pk == memory_pk, Passage.id.in_(list(ids)))
    )).all()
    texts = {i: text for i, text, _ in rows}
    return [texts.get(i, "") for i in ids], {text: vector for _, text, vector in rows if vector is not None}


async def passages_by_ids(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                          ) -> dict[int, RecalledPassage]:
    if not ids:
        return {}
    rows = await session.execute(_passages_statement(), {"tenant_id": tenant_id, "memory_pk": memory_pk,
                                                          "ids": list(ids)})
    return {i: RecalledPassage(id=i, text=t, first_turn=a, last_turn=b, at=at) for i, t, a, b, at in rows}


@functools.cache
def _passages_statement() -> Select[Any]:
    return (select(Passage.id, Passage.text, Passage.first_turn, Passage.last_turn, Passage.at)
            .where(Passage.tenant_id == bindparam("tenant_id"), Passage.memory_pk == bindparam("memory_pk"),
                   Passage.id.in_(bindparam("ids", expanding=True))))


def items_to_json(items: Sequence[Recalled]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, RecalledFact):
            out.append({"kind": "fact", "key": item.key, "id": item.id, "note": item.note, "subject": item.subject,
                        "object": item.object, "at": item.at.isoformat(), "first_turn": item.first_turn,
                        "last_turn": item.last_turn, "retired_by": item.retired_by, "part": item.part})
        else:
            out.append({"kind": "passage", "id": item.id, "text": item.text, "first_turn": item.first_turn,
                        "last_turn": item.last_turn, "at": item.at.isoformat()})
    return out


def items_from_json(rows: Sequence[dict[str, Any]]) -> list[Recalled]:
    items: list[Recalled] = []
    for row in rows:
        fields = {k: v for k, v in row.items() if k != "kind"}
        fields["at"] = datetime.fromisoformat(fields["at"])
        items.append(RecalledFact(**fields) if row["kind"] == "fact" else RecalledPassage(**fields))
    return items


def _ids(items: Sequence[Recalled]) -> tuple[list[int], list[int]]:
    return ([i.id for i in items if isinstance(i, RecalledFact)],
            [i.id for i in items if isinstance(i, RecalledPassage)])


def save_block(session: AsyncSession, *, tenant_id: str, memory_pk: int, turn: int, before_seq: int, text: str,
               items: Sequence[Recalled], provenance: str, at: datetime) -> None:
    """The turn's block as first placed (added to the caller's transaction)."""
    fact_ids, passage_ids = _ids(items)
    session.add(RecallBlock(memory_pk=memory_pk, tenant_id=tenant_id, turn=turn, before_seq=before_seq, text=text,
                            fact_ids=fact_ids, passage_ids=passage_ids, items=items_to_json(items),
                            provenance=provenance, at=at, removed=False))


def _block(row: RecallBlock) -> BlockRow:
    return BlockRow(turn=row.turn, before_seq=row.before_seq, text=row.text, items=items_from_json(row.items),
                    provenance=row.provenance, at=row.at, distilled_text=row.distilled_text, removed=row.removed,
                    distilled_at=row.distilled_at, fact_ids=list(row.fact_ids), passage_ids=list(row.passage_ids),
                    distilled_fact_ids=row.distilled_fact_ids, distilled_passage_ids=row.distilled_passage_ids)


async def recall_blocks(session: AsyncSession, *, tenant_id: str, memory_pk: int,
                        undistilled_before: int | None = None) -> list[BlockRow]:
    """Every turn's block, oldest first (the memory's state); with `undistilled_before`, only the blocks of
    earlier turns still waiting for distill (what the lane reads on each new message, whatever the length
    of the conversation)."""
    query = select(RecallBlock).where(RecallBlock.tenant_id == tenant_id, RecallBlock.memory_pk == memory_pk)
    if undistilled_before is not None:
        query = query.where(RecallBlock.distilled_at.is_(None), RecallBlock.turn < undistilled_before)
    rows = await session.execute(query.order_by(RecallBlock.turn))
    return [_block(row) for row in rows.scalars()]


async def blocks_in_view(session: AsyncSession, *, tenant_id: str, memory_pk: int, from_seq: int
                         ) -> dict[int, tuple[str, frozenset[int]]]:
    """Blocks as the history carries them, by the seq they stand before, with the fact ids they hold:
    distilled once distilled, none once removed; only those standing at or after `from_seq` (the oldest
    message still in view)."""
    rows = await session.execute(
        select(RecallBlock.before_seq, func.coalesce(RecallBlock.distilled_text, RecallBlock.text),
               func.coalesce(RecallBlock.distilled_fact_ids, RecallBlock.fact_ids))
        .where(RecallBlock.tenant_id == tenant_id, RecallBlock.memory_pk == memory_pk,
               RecallBlock.before_seq >= from_seq, RecallBlock.removed.is_(False)))
    return {seq: (text, frozenset(ids)) for seq, text, ids in rows}


async def distill_block(session: AsyncSession, *, tenant_id: str, memory_pk: int, turn: int, text: str | None,
                        kept: Sequence[Recalled], at: datetime) -> bool:
    """Write the turn's distilled block (None: removed) unless distilled already; True when this call did."""
    fact_ids, passage_ids = _ids(kept)
    result = await session.execute(
        update(RecallBlock)
        .where(RecallBlock.tenant_id == tenant_id, RecallBlock.memory_pk == memory_pk, RecallBlock.turn == turn,
               RecallBlock.distilled_at.is_(None))
        .values(distilled_text=text, removed=text is None, distilled_fact_ids=fact_ids,
                distilled_passage_ids=passage_ids, distilled_at=at))
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def save_walk(session: AsyncSession, *, tenant_id: str, memory_pk: int, for_turn: int, after_seq: int,
                    levels: Mapping[int, int], at: datetime) -> None:
    await session.execute(
        insert(RecallWalk).values(memory_pk=memory_pk, tenant_id=tenant_id, for_turn=for_turn, after_seq=after_seq,
                                  levels=[[k, v] for k, v in levels.items()], at=at)
        .on_conflict_do_nothing(index_elements=["memory_pk", "for_turn"]))


async def prepared_walk(session: AsyncSession, *, tenant_id: str, memory_pk: int, for_turn: int
                        ) -> dict[int, int] | None:
    """The levels the lane prepared for this turn's message, in the order the walk reached them."""
    levels = (await session.execute(
        select(RecallWalk.levels).where(RecallWalk.tenant_id == tenant_id, RecallWalk.memory_pk == memory_pk,
                                        RecallWalk.for_turn == for_turn))).scalar_one_or_none()
    return _levels(levels)
