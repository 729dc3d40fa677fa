"""The note ask: episodes awaiting facts, acknowledging them, and the raw note calls kept.

The hot path and the lane both go through here under the memory's row lock (`memories.lock_memory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from engine.episodes import EpisodeState
from engine.episodes import acknowledge as engine_acknowledge
from store.models import EpisodeRow, EpisodeTransitionRow, NoteCallRow
from store.records import EpisodeRecord, frozen_copy
from store.repositories.episode_store import as_episode

__all__ = ["acknowledge", "awaiting_note", "keep_note_calls", "kept_note_calls", "record_note_ask"]


async def record_note_ask(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, episode_keys: Sequence[str], at: datetime
) -> None:
    """One more call asked for these episodes' facts; the first ask's time is kept."""
    if not episode_keys:
        return
    await session.execute(
        update(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.episode_key.in_(episode_keys))
        .values(asks=EpisodeRow.asks + 1, asked_at=func.coalesce(EpisodeRow.asked_at, at))
    )


async def awaiting_note(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[EpisodeRecord]:
    """Leaving episodes whose facts have not been written: what a note call answers."""
    rows = await session.execute(
        select(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.state == EpisodeState.LEAVING.value, EpisodeRow.facts_written.is_(False))
        .order_by(EpisodeRow.first_seq)
        .with_for_update()
    )
    return [frozen_copy(row, EpisodeRecord) for row in rows.scalars()]


async def acknowledge(session: AsyncSession, *, tenant_id: str, episodes: Sequence[EpisodeRecord],
                      at: datetime) -> None:
    """The note for these episodes was taken: they seal at the next decorate once their last turn is over."""
    for episode in episodes:
        # Locked and read by `awaiting_note` in this transaction: the session hands back that row, no query.
        row = await session.get(EpisodeRow, episode.id)
        if row is None:
            continue
        engine_acknowledge(as_episode(row))  # refuses an episode that is not leaving
        row.facts_written = True
        session.add(EpisodeTransitionRow(
            memory_pk=row.memory_pk, tenant_id=tenant_id, episode_key=row.episode_key, before=row.state,
            after=row.state, reason="acknowledged", at=at,
        ))


async def keep_note_calls(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, decorate_id: str, at: datetime,
    episode_keys: Sequence[str], calls: Sequence[tuple[str, Any]], taken: bool, error: str | None,
) -> int | None:
    """Every note call of a reply, raw, whether taken or not (for inspection); returns the first one's id."""
    rows = [NoteCallRow(memory_pk=memory_pk, tenant_id=tenant_id, decorate_id=decorate_id, call_id=call_id,
                     arguments=arguments, taken=taken, error=error, episode_keys=list(episode_keys), at=at)
            for call_id, arguments in calls]
    session.add_all(rows)
    await session.flush()
    return rows[0].id if rows else None


async def kept_note_calls(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, calls: Sequence[tuple[str, str]]
) -> set[tuple[str, str]]:
    """Which of these note calls (call id, arguments) the memory already keeps: each is taken once, whether
    report or decorate saw it first. The arguments are compared too, so a model reusing a call id
    (`call_0` on every reply) has its next note taken."""
    if not calls:
        return set()
    rows = await session.execute(
        select(NoteCallRow.call_id, NoteCallRow.arguments)
        .where(NoteCallRow.tenant_id == tenant_id, NoteCallRow.memory_pk == memory_pk,
               NoteCallRow.call_id.in_({call_id for call_id, _ in calls}))
    )
    return {(call_id, arguments) for call_id, arguments in rows}
