"""Episodes: loaded as the engine's, saved from its cut and its transitions.

The hot path and the lane both go through here under the memory's row lock (`memories.lock_memory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.episodes import Episode, EpisodeState, Transition
from engine.traces import encoding_trace
from store.models import EpisodeRow, EpisodeTransitionRow
from store.records import EpisodeRecord, frozen_copy
from store.repositories import trace_store

__all__ = ["as_episode", "apply_transitions", "covered_prefix", "load_episode_rows", "load_episodes", "save_cut"]


def as_episode(row: EpisodeRow) -> Episode:
    """The engine's episode of a stored row."""
    return Episode(
        id=row.episode_key, state=EpisodeState(row.state), first_seq=row.first_seq, last_seq=row.last_seq,
        first_turn=row.first_turn, last_turn=row.last_turn, tokens=row.tokens, at=row.at,
        facts_written=row.facts_written, sealed_without_facts=row.sealed_without_facts, salience=row.salience,
    )


async def load_episode_rows(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[EpisodeRecord]:
    rows = await session.execute(
        select(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk)
        .order_by(EpisodeRow.first_seq)
    )
    return [frozen_copy(row, EpisodeRecord) for row in rows.scalars()]


async def load_episodes(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, changed_after: int | None = None,
    forgotten: bool = True, reaching: int | None = None,
) -> list[Episode]:
    """A memory's episodes in history order: all of them, or only those changed after the mechanism version
    `changed_after` (their stamps, migration 0013), or (`forgotten=False`) only those still remembered, or
    only those ending at or after the seq `reaching`."""
    # Columns, not ORM rows: a long memory has tens of thousands of episodes, and row objects cost ten times as much.
    query = (
        select(EpisodeRow.episode_key, EpisodeRow.state, EpisodeRow.first_seq, EpisodeRow.last_seq,
               EpisodeRow.first_turn, EpisodeRow.last_turn, EpisodeRow.tokens, EpisodeRow.at,
               EpisodeRow.facts_written, EpisodeRow.sealed_without_facts, EpisodeRow.salience)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk)
        .order_by(EpisodeRow.first_seq)
    )
    if changed_after is not None:
        query = query.where(EpisodeRow.changed_version > changed_after)
    if not forgotten:
        query = query.where(EpisodeRow.state != EpisodeState.FORGOTTEN.value)
    if reaching is not None:
        query = query.where(EpisodeRow.last_seq >= reaching)
    states = {state.value: state for state in EpisodeState}
    return [
        Episode(id=key, state=states[state], first_seq=first_seq, last_seq=last_seq, first_turn=first_turn,
                last_turn=last_turn, tokens=tokens, at=at, facts_written=facts_written,
                sealed_without_facts=sealed_without_facts, salience=salience)
        for (key, state, first_seq, last_seq, first_turn, last_turn, tokens, at, facts_written, sealed_without_facts,
             salience) in await session.execute(query)
    ]


async def covered_prefix(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> int:
    """`engine.cutting.covered_prefix` in Postgres: the last seq up to which episodes cover history from its
    first message without a gap (0 if the first message is uncut), without reading every episode."""
    spans = (
        select(EpisodeRow.first_seq, EpisodeRow.last_seq,
               func.max(EpisodeRow.last_seq).over(order_by=EpisodeRow.first_seq, rows=(None, -1)).label("before"))
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk)
        .subquery()
    )
    # The first episode that leaves a gap before it ends the prefix; without one, the last episode does.
    gap = await session.scalar(
        select(func.min(spans.c.first_seq))
        .where(spans.c.first_seq > func.coalesce(spans.c.before, 0) + 1)
    )
    covered = select(func.coalesce(func.max(spans.c.last_seq), 0))
    if gap is not None:
        covered = covered.where(spans.c.first_seq < gap)
    return int(await session.scalar(covered) or 0)


async def save_cut(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, episodes: Sequence[Episode], at: datetime
) -> list[str]:
    """New live episodes from a cut, each with its first transition and its encoding trace: the one save the
    hot path and the lane share. An episode already there (same deterministic key, a retried cut) is left
    alone. Returns the keys inserted."""
    values = [
        {"memory_pk": memory_pk, "tenant_id": tenant_id, "episode_key": e.id, "state": e.state.value,
         "first_seq": e.first_seq, "last_seq": e.last_seq, "first_turn": e.first_turn, "last_turn": e.last_turn,
         "tokens": e.tokens, "at": e.at, "facts_written": e.facts_written,
         "sealed_without_facts": e.sealed_without_facts, "asks": 0}
        for e in episodes
    ]
    if not values:
        return []
    result = await session.execute(
        insert(EpisodeRow).values(values).on_conflict_do_nothing(index_elements=["memory_pk", "episode_key"])
        .returning(EpisodeRow.episode_key, EpisodeRow.state)
    )
    inserted = dict(result.all())
    session.add_all(
        EpisodeTransitionRow(memory_pk=memory_pk, tenant_id=tenant_id, episode_key=key, before=None, after=state,
                          reason="cut", at=at)
        for key, state in inserted.items()
    )
    await trace_store.add_traces(session, tenant_id=tenant_id, memory_pk=memory_pk,
                     traces=[encoding_trace(e) for e in episodes if e.id in inserted])
    return list(inserted)


async def apply_transitions(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_pk: int,
    episodes: Sequence[Episode],
    transitions: Sequence[Transition],
    at: datetime,
) -> None:
    """Persist the engine's new states (and flags) for the episodes that moved, with their history."""
    if not transitions:
        return
    by_id = {e.id: e for e in episodes}
    moved = [by_id[key] for key in dict.fromkeys(t.episode_id for t in transitions)]
    # One statement for all of them (a fade moves many episodes at once), executed as a batch.
    table = EpisodeRow.__table__
    connection = await session.connection()
    await connection.execute(
        update(table)
        .where(table.c.tenant_id == tenant_id, table.c.memory_pk == memory_pk,
               table.c.episode_key == bindparam("key"))
        .values(state=bindparam("new_state"), facts_written=bindparam("new_facts_written"),
                sealed_without_facts=bindparam("new_sealed_without_facts")),
        [{"key": e.id, "new_state": e.state.value, "new_facts_written": e.facts_written,
          "new_sealed_without_facts": e.sealed_without_facts} for e in moved],
    )
    session.add_all(
        EpisodeTransitionRow(
            memory_pk=memory_pk, tenant_id=tenant_id, episode_key=t.episode_id, before=t.before.value,
            after=t.after.value, reason=t.reason, at=at,
        )
        for t in transitions
    )
