"""The lane's reads and writes: events with their payloads, history as the engine takes it, idempotent inserts
of the lane's own rows, and the figures the workflow shows (note ask, leaving episodes, backlog, sleep).

Every write here is safe to repeat: a job retried after a crash adds nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.facts import Fact
from engine.messages import StoredMessage
from store.models import EpisodeRow, FactRow, MemoryRow, MessageRow, OutboxEventRow
from store.models.lane import ParkedJobRow, SleepPreparationRow

__all__ = [
    "LaneFigures",
    "event_payload",
    "events_after",
    "facts_by_keys",
    "figures",
    "memory_pk",
    "messages_in",
    "park_job",
    "resolve_parked",
    "record_sleep_prepared",
    "stored_messages",
    "uncut_and_recent",
]


async def memory_pk(session: AsyncSession, *, tenant_id: str, memory_id: str) -> int | None:
    """The memory's row id, or None once it has been erased."""
    return (
        await session.execute(
            select(MemoryRow.id).where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id)
        )
    ).scalar_one_or_none()


async def events_after(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int, limit: int
) -> list[tuple[int, str, str]]:
    """(seq, kind, traceparent) of the events past `after_seq`, in order."""
    rows = await session.execute(
        select(OutboxEventRow.seq, OutboxEventRow.kind, OutboxEventRow.payload["traceparent"].astext)
        .where(OutboxEventRow.tenant_id == tenant_id, OutboxEventRow.memory_pk == memory_pk,
               OutboxEventRow.seq > after_seq)
        .order_by(OutboxEventRow.seq)
        .limit(limit)
    )
    return [(seq, kind, trace or "") for seq, kind, trace in rows]


async def event_payload(session: AsyncSession, *, tenant_id: str, memory_pk: int, seq: int) -> dict[str, Any]:
    payload = (
        await session.execute(
            select(OutboxEventRow.payload).where(
                OutboxEventRow.tenant_id == tenant_id, OutboxEventRow.memory_pk == memory_pk, OutboxEventRow.seq == seq
            )
        )
    ).scalar_one_or_none()
    return dict(payload or {})


async def stored_messages(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, first_seq: int = 0, last_seq: int | None = None
) -> list[StoredMessage]:
    """History in seq order as the engine takes it."""
    query = select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens).where(
        MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk, MessageRow.seq >= first_seq
    )
    if last_seq is not None:
        query = query.where(MessageRow.seq <= last_seq)
    rows = await session.execute(query.order_by(MessageRow.seq))
    return [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]


async def messages_in(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, spans: Sequence[tuple[int, int]]
) -> list[StoredMessage]:
    """The history inside these (first seq, last seq) spans, in seq order: what remembered episodes hold,
    without decoding the forgotten rest of a long memory."""
    if not spans:
        return []
    rows = await session.execute(
        select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens)
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk,
               or_(*(MessageRow.seq.between(first, last) for first, last in spans)))
        .order_by(MessageRow.seq)
    )
    return [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]


async def uncut_and_recent(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, from_seq: int, recent: int
) -> list[StoredMessage]:
    """History from `from_seq` on, and at least the last `recent` messages: what cutting reads, without
    decoding the whole of a long memory."""
    newest = (
        select(func.coalesce(func.max(MessageRow.seq), 0))
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk)
        .scalar_subquery()
    )
    rows = await session.execute(
        select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens)
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk,
               MessageRow.seq >= func.least(from_seq, newest - recent + 1))
        .order_by(MessageRow.seq)
    )
    return [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]


async def facts_by_keys(session: AsyncSession, *, tenant_id: str, memory_pk: int, keys: Sequence[str]) -> list[Fact]:
    if not keys:
        return []
    rows = await session.execute(
        select(FactRow)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.fact_key.in_(list(keys)))
        .order_by(FactRow.id)
    )
    return [
        Fact(id=r.fact_key, note=r.note, subject=r.subject, object=r.object, milestone=r.milestone,
             episode_ids=tuple(r.episode_keys), at=r.at, first_turn=r.first_turn, last_turn=r.last_turn)
        for r in rows.scalars()
    ]


async def park_job(session: AsyncSession, *, tenant_id: str, memory_pk: int, seq: int, job: str, error: str) -> None:
    """Record a job that kept failing; one parked before (a retry that failed again) gets its new error and is open
    again."""
    await session.execute(
        insert(ParkedJobRow)
        .values(memory_pk=memory_pk, tenant_id=tenant_id, seq=seq, job=job, error=error[:4000])
        .on_conflict_do_update(index_elements=["memory_pk", "seq", "job"],
                               # Parked again after a retry: its time is now, so a listing shows it failed again.
                               set_={"error": error[:4000], "resolved_at": None, "created_at": func.now()})
    )


async def resolve_parked(session: AsyncSession, *, tenant_id: str, memory_pk: int, seq: int, job: str,
                         at: datetime) -> None:
    """A retried job succeeded: its row stays, for the record, marked resolved."""
    await session.execute(
        update(ParkedJobRow)
        .where(ParkedJobRow.tenant_id == tenant_id, ParkedJobRow.memory_pk == memory_pk, ParkedJobRow.seq == seq,
               ParkedJobRow.job == job, ParkedJobRow.resolved_at.is_(None))
        .values(resolved_at=at)
    )


async def record_sleep_prepared(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, for_user_message_at: datetime,
    episodes_cut: int, units_scored: int,
) -> None:
    await session.execute(
        insert(SleepPreparationRow)
        .values(memory_pk=memory_pk, tenant_id=tenant_id, for_user_message_at=for_user_message_at,
                episodes_cut=episodes_cut, units_scored=units_scored)
        .on_conflict_do_nothing(index_elements=["memory_pk", "for_user_message_at"])
    )


@dataclass(frozen=True)
class LaneFigures:
    """The raw figures behind the workflow's view of a memory."""

    last_turn: int
    last_user_message_at: datetime | None
    sleep_prepared_for: datetime | None
    note_ask_since: datetime | None
    note_asks: int
    note_ask_first_turn: int
    note_ask_last_turn: int
    leaving_episodes: int
    backlog: int
    parked_jobs: int


async def figures(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> LaneFigures:
    last_turn, last_user = (await session.execute(
        select(func.max(MessageRow.turn), func.max(MessageRow.at).filter(MessageRow.role == "user"))
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk)
    )).one()
    leaving = EpisodeRow.state == "leaving"
    count, since, asks, first, last = (await session.execute(
        select(func.count(), func.min(EpisodeRow.asked_at), func.max(EpisodeRow.asks),
               func.min(EpisodeRow.first_turn), func.max(EpisodeRow.last_turn))
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk, leaving)
    )).one()
    backlog = (await session.execute(
        select(func.count()).select_from(OutboxEventRow)
        .where(OutboxEventRow.tenant_id == tenant_id, OutboxEventRow.memory_pk == memory_pk,
               OutboxEventRow.processed_at.is_(None))
    )).scalar_one()
    parked = (await session.execute(
        select(func.count()).select_from(ParkedJobRow)
        .where(ParkedJobRow.tenant_id == tenant_id, ParkedJobRow.memory_pk == memory_pk,
               ParkedJobRow.resolved_at.is_(None))
    )).scalar_one()
    prepared = (await session.execute(
        select(func.max(SleepPreparationRow.for_user_message_at))
        .where(SleepPreparationRow.tenant_id == tenant_id, SleepPreparationRow.memory_pk == memory_pk)
    )).scalar_one()
    return LaneFigures(
        last_turn=last_turn or 0, last_user_message_at=last_user, sleep_prepared_for=prepared,
        note_ask_since=since, note_asks=(asks or 0) if since else 0,
        note_ask_first_turn=first or 0, note_ask_last_turn=last or 0, leaving_episodes=count,
        backlog=backlog, parked_jobs=parked,
    )
