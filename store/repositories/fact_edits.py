"""A memory's facts as its user manages them through the API: read one or a search's hits, retire one for its
correction, forget one (retired, out of every search, the walks and the recall blocks that held it), or erase it
with what hangs off it.

Writes run under the memory's row lock (`memories.lock_memory`), as the hot path's and the lane's do. A new fact
is written by `fact_store.add_facts`, the path a note's facts take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, and_, cast, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import FactRow, RecallBlockRow, RecallWalkRow, TraceRow

__all__ = ["FORGOTTEN", "FactRecord", "erase_fact", "fact_record", "facts_in_force", "forget_fact", "retire_fact"]

# `retired_by` of a fact forgotten by request: no fact retired it, its user did.
FORGOTTEN = "forgotten"


@dataclass(frozen=True)
class FactRecord:
    """A fact as the API shows it, with what decides what may be done to it."""

    id: int
    key: str
    note: str
    subject: str
    object: str
    milestone: bool
    source: str
    episode_keys: tuple[str, ...]
    first_turn: int
    last_turn: int
    at: datetime
    valid_from: datetime
    retired_at: datetime | None
    retired_by: str | None
    merged_into: str | None
    kind: str = "fact"
    settled_by: str | None = None
    retired_as: str | None = None
    origin_memory_id: str | None = None  # in a user's graph: the conversation it came from


_COLUMNS = (FactRow.id, FactRow.fact_key, FactRow.note, FactRow.subject, FactRow.object, FactRow.milestone,
            FactRow.source, FactRow.episode_keys, FactRow.first_turn, FactRow.last_turn, FactRow.at,
            FactRow.valid_from, FactRow.retired_at, FactRow.retired_by, FactRow.merged_into, FactRow.kind,
            FactRow.settled_by, FactRow.retired_as, FactRow.origin_memory_id)


def _record(row: Any) -> FactRecord:
    values = list(row)
    values[7] = tuple(values[7])
    return FactRecord(*values)


async def fact_record(session: AsyncSession, *, tenant_id: str, memory_pk: int, key: str) -> FactRecord | None:
    """The fact by its key (the id the API shows), locked for the caller's change; None when this memory has
    none by that key."""
    row = (await session.execute(
        select(*_COLUMNS).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                                FactRow.fact_key == key).with_for_update()
    )).one_or_none()
    return None if row is None else _record(row)


async def facts_in_force(session: AsyncSession, *, tenant_id: str, memory_pk: int, ids: Sequence[int]
                         ) -> dict[int, FactRecord]:
    """Of these fact ids (a search's hits), those still in force: neither retired (nor forgotten) nor merged."""
    if not ids:
        return {}
    rows = await session.execute(
        select(*_COLUMNS).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                                FactRow.id.in_(list(ids)), FactRow.retired_at.is_(None),
                                FactRow.merged_into.is_(None))
    )
    return {row[0]: _record(row) for row in rows}


async def retire_fact(session: AsyncSession, *, tenant_id: str, memory_pk: int, key: str, by: str,
                      at: datetime) -> None:
    """Retire the fact in favour of `by`, as the lane retires a contradicted one (its conflict settled)."""
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.fact_key == key,
        FactRow.retired_at.is_(None)).values(retired_at=at, retired_by=by, conflict_with=None,
                                             retired_as="correction"))
    await _settle_conflicts(session, tenant_id, memory_pk, [key])


async def forget_fact(session: AsyncSession, *, tenant_id: str, memory_pk: int, key: str, at: datetime) -> list[str]:
    """Retire the fact and its restatements (merged into it) as forgotten, and take them out of every search:
    no word index or vector to match, marked integrated so the lane never indexes them again, and out of the
    walks the lane prepared. Returns the keys forgotten; the rows stay for the export."""
    ids, keys = await _with_restatements(session, tenant_id, memory_pk, key)
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.fact_key.in_(keys)).values(
        retired_at=func.coalesce(FactRow.retired_at, at), retired_by=FORGOTTEN, conflict_with=None, words=None,
        embedding=None, integrated_at=func.coalesce(FactRow.integrated_at, at)))
    # The older values it retired were only ever to be shown beside it: with it gone, they are not found either.
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.retired_by.in_(keys)).values(
        words=None, embedding=None))
    await _settle_conflicts(session, tenant_id, memory_pk, keys)
    await _drop_prepared_walks(session, tenant_id, memory_pk)
    # Recall blocks of earlier turns stay in view where they were placed: one that showed it is shown no more,
    # settled as distilled to nothing so the lane's distill never writes it again.
    await session.execute(update(RecallBlockRow).where(_showing(tenant_id, memory_pk, ids)).values(
        removed=True, distilled_text=None, distilled_at=func.coalesce(RecallBlockRow.distilled_at, at)))
    return keys


async def erase_fact(session: AsyncSession, *, tenant_id: str, memory_pk: int, key: str) -> list[str]:
    """Delete the fact, its restatements and their traces outright (the word index and vector are the rows'
    own), and the walks that rated it. Returns the keys erased."""
    ids, keys = await _with_restatements(session, tenant_id, memory_pk, key)
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.retired_by.in_(keys)).values(
        words=None, embedding=None))
    # A recall block that showed it holds its text: it goes too.
    await session.execute(delete(RecallBlockRow).where(_showing(tenant_id, memory_pk, ids)))
    await _settle_conflicts(session, tenant_id, memory_pk, keys)
    await session.execute(delete(TraceRow).where(TraceRow.tenant_id == tenant_id, TraceRow.memory_pk == memory_pk,
                                                 TraceRow.fact_key.in_(keys)))
    await session.execute(delete(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                                                FactRow.fact_key.in_(keys)))
    await _drop_prepared_walks(session, tenant_id, memory_pk)
    return keys


async def _with_restatements(session: AsyncSession, tenant_id: str, memory_pk: int, key: str
                             ) -> tuple[list[int], list[str]]:
    """Ids and keys of the fact and its restatements: a restatement is the same fact by another note call, so
    what is forgotten of one is forgotten of both."""
    rows = (await session.execute(select(FactRow.id, FactRow.fact_key).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
        or_(FactRow.fact_key == key, FactRow.merged_into == key)).order_by(FactRow.id))).all()
    return [i for i, _ in rows], [k for _, k in rows]


def _showing(tenant_id: str, memory_pk: int, ids: Sequence[int]) -> Any:
    held = cast(list(ids), ARRAY(BigInteger))
    return and_(RecallBlockRow.tenant_id == tenant_id, RecallBlockRow.memory_pk == memory_pk,
                or_(RecallBlockRow.fact_ids.overlap(held), RecallBlockRow.distilled_fact_ids.overlap(held)))


async def _settle_conflicts(session: AsyncSession, tenant_id: str, memory_pk: int, keys: Sequence[str]) -> None:
    # A fact in conflict with one that no longer stands has nothing left to be shown beside.
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.conflict_with.in_(list(keys)))
        .values(conflict_with=None))


async def _drop_prepared_walks(session: AsyncSession, tenant_id: str, memory_pk: int) -> None:
    # A prepared walk rated facts by id and recall shows what it kept as it is; the next message walks inline.
    await session.execute(delete(RecallWalkRow).where(RecallWalkRow.tenant_id == tenant_id,
                                                      RecallWalkRow.memory_pk == memory_pk))
