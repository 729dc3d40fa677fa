"""Each turn's recall block (placed, then distilled) and the walk the lane prepared for the next message.

Every write is safe to repeat: a turn's block and a turn's prepared walk are written once, distill once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.recall.grouping import Recalled, RecalledFact, RecalledPassage
from store.models import RecallBlockRow, RecallWalkRow

__all__ = [
    "StoredBlock",
    "drop_block",
    "blocks_in_view",
    "distill_block",
    "items_from_json",
    "items_to_json",
    "levels_from_json",
    "prepared_walk",
    "recall_blocks",
    "save_block",
    "save_walk",
]


@dataclass(frozen=True)
class StoredBlock:
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


def _fact_json(item: RecalledFact) -> dict[str, Any]:
    return {"kind": "fact", "key": item.key, "id": item.id, "note": item.note, "subject": item.subject,
            "object": item.object, "at": item.at.isoformat(), "first_turn": item.first_turn,
            "last_turn": item.last_turn, "retired_by": item.retired_by, "part": item.part,
            "retired_as": item.retired_as, **_elsewhere(item)}


def _elsewhere(item: Recalled) -> dict[str, Any]:
    # Only when set: blocks of one conversation are stored (and exported) as they were before the people layer.
    return {"elsewhere": True} if item.elsewhere else {}


def items_to_json(items: Sequence[Recalled]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, RecalledFact):
            out.append(_fact_json(item))
        else:
            out.append({"kind": "passage", "id": item.id, "text": item.text, "first_turn": item.first_turn,
                        "last_turn": item.last_turn, "at": item.at.isoformat(),
                        "since": [_fact_json(f) for f in item.since], **_elsewhere(item)})
    return out


def items_from_json(rows: Sequence[dict[str, Any]]) -> list[Recalled]:
    items: list[Recalled] = []
    for row in rows:
        fields = {k: v for k, v in row.items() if k != "kind"}
        fields["at"] = datetime.fromisoformat(fields["at"])
        if row["kind"] == "fact":
            items.append(RecalledFact(**fields))
        else:
            # Blocks stored before `since` existed have none.
            fields["since"] = tuple(f for f in items_from_json(fields.get("since") or [])
                                    if isinstance(f, RecalledFact))
            items.append(RecalledPassage(**fields))
    return items


def _ids(items: Sequence[Recalled]) -> tuple[list[int], list[int]]:
    return ([i.id for i in items if isinstance(i, RecalledFact)],
            [i.id for i in items if isinstance(i, RecalledPassage)])


def save_block(session: AsyncSession, *, tenant_id: str, memory_pk: int, turn: int, before_seq: int, text: str,
               items: Sequence[Recalled], provenance: str, at: datetime) -> None:
    """The turn's block as first placed (added to the caller's transaction)."""
    fact_ids, passage_ids = _ids(items)
    session.add(RecallBlockRow(memory_pk=memory_pk, tenant_id=tenant_id, turn=turn, before_seq=before_seq, text=text,
                            fact_ids=fact_ids, passage_ids=passage_ids, items=items_to_json(items),
                            provenance=provenance, at=at, removed=False))


def _block(row: RecallBlockRow) -> StoredBlock:
    return StoredBlock(turn=row.turn, before_seq=row.before_seq, text=row.text, items=items_from_json(row.items),
                    provenance=row.provenance, at=row.at, distilled_text=row.distilled_text, removed=row.removed,
                    distilled_at=row.distilled_at, fact_ids=list(row.fact_ids), passage_ids=list(row.passage_ids),
                    distilled_fact_ids=row.distilled_fact_ids, distilled_passage_ids=row.distilled_passage_ids)


async def drop_block(session: AsyncSession, *, tenant_id: str, memory_pk: int, before_seq: int) -> None:
    """Forget the block placed before a message that was replaced: the message replacing it gets its own."""
    await session.execute(delete(RecallBlockRow).where(
        RecallBlockRow.tenant_id == tenant_id, RecallBlockRow.memory_pk == memory_pk,
        RecallBlockRow.before_seq == before_seq))


async def recall_blocks(session: AsyncSession, *, tenant_id: str, memory_pk: int,
                        undistilled_before: int | None = None) -> list[StoredBlock]:
    """Every turn's block, oldest first (the memory's state); with `undistilled_before`, only the blocks of
    earlier turns still waiting for distill (what the lane reads on each new message, whatever the length
    of the conversation)."""
    query = select(RecallBlockRow).where(RecallBlockRow.tenant_id == tenant_id, RecallBlockRow.memory_pk == memory_pk)
    if undistilled_before is not None:
        query = query.where(RecallBlockRow.distilled_at.is_(None), RecallBlockRow.turn < undistilled_before)
    rows = await session.execute(query.order_by(RecallBlockRow.turn))
    return [_block(row) for row in rows.scalars()]


async def blocks_in_view(session: AsyncSession, *, tenant_id: str, memory_pk: int, from_seq: int
                         ) -> dict[int, tuple[str, frozenset[int]]]:
    """Blocks as the history carries them, by the seq they stand before, with the fact ids they hold:
    distilled once distilled, none once removed; only those standing at or after `from_seq` (the oldest
    message still in view)."""
    rows = await session.execute(
        select(RecallBlockRow.before_seq, func.coalesce(RecallBlockRow.distilled_text, RecallBlockRow.text),
               func.coalesce(RecallBlockRow.distilled_fact_ids, RecallBlockRow.fact_ids))
        .where(RecallBlockRow.tenant_id == tenant_id, RecallBlockRow.memory_pk == memory_pk,
               RecallBlockRow.before_seq >= from_seq, RecallBlockRow.removed.is_(False)))
    return {seq: (text, frozenset(ids)) for seq, text, ids in rows}


async def distill_block(session: AsyncSession, *, tenant_id: str, memory_pk: int, turn: int, text: str | None,
                        kept: Sequence[Recalled], at: datetime) -> bool:
    """Write the turn's distilled block (None: removed) unless distilled already; True when this call did."""
    fact_ids, passage_ids = _ids(kept)
    result = await session.execute(
        update(RecallBlockRow)
        .where(RecallBlockRow.tenant_id == tenant_id, RecallBlockRow.memory_pk == memory_pk,
               RecallBlockRow.turn == turn,
               RecallBlockRow.distilled_at.is_(None))
        .values(distilled_text=text, removed=text is None, distilled_fact_ids=fact_ids,
                distilled_passage_ids=passage_ids, distilled_at=at))
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def save_walk(session: AsyncSession, *, tenant_id: str, memory_pk: int, for_turn: int, after_seq: int,
                    levels: Mapping[int, int], at: datetime) -> None:
    await session.execute(
        insert(RecallWalkRow).values(memory_pk=memory_pk, tenant_id=tenant_id, for_turn=for_turn, after_seq=after_seq,
                                  levels=[[k, v] for k, v in levels.items()], at=at)
        .on_conflict_do_nothing(index_elements=["memory_pk", "for_turn"]))


async def prepared_walk(session: AsyncSession, *, tenant_id: str, memory_pk: int, for_turn: int
                        ) -> dict[int, int] | None:
    """The levels the lane prepared for this turn's message, in the order the walk reached them."""
    levels = (await session.execute(
        select(RecallWalkRow.levels).where(RecallWalkRow.tenant_id == tenant_id, RecallWalkRow.memory_pk == memory_pk,
                                        RecallWalkRow.for_turn == for_turn))).scalar_one_or_none()
    return levels_from_json(levels)


def levels_from_json(levels: list[list[int]] | None) -> dict[int, int] | None:
    # A list of pairs, not an object: JSONB keeps no key order.
    return None if levels is None else {int(k): int(v) for k, v in levels}
