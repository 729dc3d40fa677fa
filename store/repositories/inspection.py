"""What the inspector reads: a tenant's memories page by page, a memory's whole fact history, its fades and sleeps.

Read-only; every query is scoped by `tenant_id=` like the rest of the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from engine.episodes import EpisodeState
from engine.traces import Trace
from store.models import DecorationRow, EpisodeRow, EpisodeTransitionRow, FactRow, MemoryRow, TraceRow

__all__ = ["MARKER_REASONS", "Marker", "MemorySummary", "episode_traces", "fact_rows", "list_memories", "markers"]

# Transitions worth a mark on the timeline: what a fade or a sleep did, and the ceiling sealing without facts.
MARKER_REASONS = ("fade", "sleep", "ceiling")


@dataclass(frozen=True)
class MemorySummary:
    memory_id: str
    created_at: datetime
    last_activity_at: datetime
    last_user_message_at: datetime | None
    messages: int
    turns: int
    facts: int
    note_ask_pending: bool
    # Episodes by state: live, leaving, sealed, forgotten.
    episodes: dict[str, int]
    # Position in the listing, for the next page's cursor.
    key: tuple[datetime, int] = field(repr=False)


@dataclass(frozen=True)
class Marker:
    """One fade, sleep or ceiling seal: when, in which turn, and how many episodes it moved."""

    reason: str
    at: datetime
    turn: int | None
    episodes: int


def _last_activity() -> Any:
    # The memory's own latest time (decorate and report move it); a memory never called has only its birth.
    return func.coalesce(MemoryRow.latest_at, MemoryRow.created_at)


async def list_memories(
    session: AsyncSession,
    *,
    tenant_id: str,
    limit: int,
    after: tuple[datetime, int] | None = None,
    prefix: str | None = None,
) -> list[MemorySummary]:
    """The tenant's memories, most recently active first; `after` is the last key of the previous page."""
    activity = _last_activity().label("activity")
    query = (
        select(MemoryRow.id, MemoryRow.memory_id, MemoryRow.created_at, activity, MemoryRow.last_user_message_at,
               MemoryRow.last_message_seq, MemoryRow.last_turn)
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.kind == "conversation")  # not users' graphs
        .order_by(activity.desc(), MemoryRow.id.desc())
        .limit(limit)
    )
    if prefix:
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(MemoryRow.memory_id.like(escaped + "%", escape="\\"))
    if after is not None:
        query = query.where(tuple_(_last_activity(), MemoryRow.id) < tuple_(after[0], after[1]))
    rows = (await session.execute(query)).all()
    pks = [row.id for row in rows]
    if not pks:
        return []
    states = await session.execute(
        select(EpisodeRow.memory_pk, EpisodeRow.state, func.count())
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk.in_(pks))
        .group_by(EpisodeRow.memory_pk, EpisodeRow.state)
    )
    by_state: dict[int, dict[str, int]] = {pk: {s.value: 0 for s in EpisodeState} for pk in pks}
    for pk, state, count in states:
        by_state[pk][state] = count
    pending = set((await session.execute(
        select(EpisodeRow.memory_pk).distinct()
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk.in_(pks),
               EpisodeRow.state == EpisodeState.LEAVING.value, EpisodeRow.facts_written.is_(False))
    )).scalars())
    facts = dict((await session.execute(
        select(FactRow.memory_pk, func.count())
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk.in_(pks), FactRow.retired_at.is_(None),
               FactRow.merged_into.is_(None))
        .group_by(FactRow.memory_pk)
    )).all())
    return [
        MemorySummary(
            memory_id=row.memory_id, created_at=row.created_at, last_activity_at=row.activity,
            last_user_message_at=row.last_user_message_at, messages=row.last_message_seq, turns=row.last_turn,
            facts=facts.get(row.id, 0), note_ask_pending=row.id in pending, episodes=by_state[row.id],
            key=(row.activity, row.id),
        )
        for row in rows
    ]


async def fact_rows(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[dict[str, Any]]:
    """Every fact the memory ever held, current and retired, oldest first, with every column the table has.

    Columns are read from the table, not listed here, so validity and provenance fields added later show up
    without a change to the inspector.
    """
    rows = await session.execute(
        select(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk).order_by(FactRow.id)
    )
    skip = {"memory_pk", "tenant_id", "embedding", "words"}  # vectors and word indexes: derived from the note
    return [{c.key: getattr(obj, c.key) for c in FactRow.__table__.columns if c.key not in skip}
            for obj in rows.scalars()]


async def markers(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[Marker]:
    """Each fade, sleep and ceiling seal, oldest first, with the turn of the call that made it.

    A decorate records its transitions and itself at the same time, so the call is found by its time.
    """
    turn = (
        select(func.max(DecorationRow.turn))
        .where(DecorationRow.tenant_id == tenant_id, DecorationRow.memory_pk == memory_pk,
               DecorationRow.at <= EpisodeTransitionRow.at)
        .scalar_subquery()
    )
    rows = await session.execute(
        select(EpisodeTransitionRow.reason, EpisodeTransitionRow.at, turn.label("turn"), func.count())
        .where(EpisodeTransitionRow.tenant_id == tenant_id, EpisodeTransitionRow.memory_pk == memory_pk,
               EpisodeTransitionRow.reason.in_(MARKER_REASONS))
        .group_by(EpisodeTransitionRow.reason, EpisodeTransitionRow.at)
        .order_by(EpisodeTransitionRow.at, EpisodeTransitionRow.reason)
    )
    return [Marker(reason=reason, at=at, turn=t, episodes=count) for reason, at, t, count in rows]


async def episode_traces(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, episode_keys: Sequence[str]
) -> list[Trace]:
    """The counted traces of these episodes only: a plot of a window need not read the whole memory's."""
    if not episode_keys:
        return []
    rows = await session.execute(
        select(TraceRow.at, TraceRow.score, TraceRow.counted, TraceRow.episode_key, TraceRow.fact_key,
               TraceRow.encoding)
        .where(TraceRow.tenant_id == tenant_id, TraceRow.memory_pk == memory_pk, TraceRow.counted,
               TraceRow.episode_key.in_(list(episode_keys)))
        .order_by(TraceRow.id)
    )
    return [Trace(at=at, score=score, counted=counted, episode_id=episode, fact_id=fact, encoding=encoding)
            for at, score, counted, episode, fact, encoding in rows]
