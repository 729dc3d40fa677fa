"""Episodes, facts, traces and boundary scores: loaded as the engine's types, saved from its plans.

The hot path and the lane's activities both go through here, each under the memory's row lock
(`memories.lock_memory`), so a cut in the lane never races a fade in a decorate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.cutting import BoundaryScores
from engine.episodes import Episode, EpisodeState, Transition
from engine.episodes import acknowledge as engine_acknowledge
from engine.facts import Fact
from engine.traces import Trace, encoding_trace
from store.models import BoundaryScore as BoundaryScoreRow
from store.models import Entity as EntityRow
from store.models import Episode as EpisodeRow
from store.models import EpisodeTransition, NoteCall
from store.models import Fact as FactRow
from store.models import Trace as TraceRow

__all__ = [
    "acknowledge",
    "add_facts",
    "awaiting_note",
    "record_note_ask",
    "add_traces",
    "keep_note_calls",
    "apply_transitions",
    "load_boundary_scores",
    "load_episode_rows",
    "load_episodes",
    "load_facts",
    "load_traces",
    "merged_facts",
    "changed_facts",
    "covered_prefix",
    "save_boundary_scores",
    "save_cut",
]


def _episode(row: EpisodeRow) -> Episode:
    return Episode(
        id=row.episode_key, state=EpisodeState(row.state), first_seq=row.first_seq, last_seq=row.last_seq,
        first_turn=row.first_turn, last_turn=row.last_turn, tokens=row.tokens, at=row.at,
        facts_written=row.facts_written, sealed_without_facts=row.sealed_without_facts,
    )


async def load_episode_rows(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[EpisodeRow]:
    rows = await session.execute(
        select(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk)
        .order_by(EpisodeRow.first_seq)
    )
    return list(rows.scalars())


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
               EpisodeRow.facts_written, EpisodeRow.sealed_without_facts)
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
                sealed_without_facts=sealed_without_facts)
        for key, state, first_seq, last_seq, first_turn, last_turn, tokens, at, facts_written, sealed_without_facts
        in await session.execute(query)
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
        EpisodeTransition(memory_pk=memory_pk, tenant_id=tenant_id, episode_key=key, before=None, after=state,
                          reason="cut", at=at)
        for key, state in inserted.items()
    )
    await add_traces(session, tenant_id=tenant_id, memory_pk=memory_pk,
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
        EpisodeTransition(
            memory_pk=memory_pk, tenant_id=tenant_id, episode_key=t.episode_id, before=t.before.value,
            after=t.after.value, reason=t.reason, at=at,
        )
        for t in transitions
    )


async def load_traces(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, counted_only: bool = True,
    changed_after: int | None = None,
) -> list[Trace]:
    """Traces in the order written; by default only counted ones, the only ones activation sums; with
    `changed_after`, only those written after that mechanism version."""
    # A fact merged into another (a restatement) lends it its traces: they count for the fact that stands.
    merged = (
        select(FactRow.fact_key, FactRow.merged_into)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.merged_into.is_not(None))
        .subquery()
    )
    query = (
        select(TraceRow.at, TraceRow.score, TraceRow.counted, TraceRow.episode_key,
               func.coalesce(merged.c.merged_into, TraceRow.fact_key), TraceRow.encoding)
        .outerjoin(merged, merged.c.fact_key == TraceRow.fact_key)
        .where(TraceRow.tenant_id == tenant_id, TraceRow.memory_pk == memory_pk)
        .order_by(TraceRow.id)
    )
    if counted_only:
        query = query.where(TraceRow.counted)
    if changed_after is not None:
        query = query.where(TraceRow.changed_version > changed_after)
    rows = await session.execute(query)
    return [Trace(at=at, score=score, counted=counted, episode_id=episode, fact_id=fact, encoding=encoding)
            for at, score, counted, episode, fact, encoding in rows]


async def merged_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, changed_after: int) -> dict[str, str]:
    """Facts merged into another since the mechanism version `changed_after`: key -> the fact that stands.
    Traces read before the merge still name the merged fact; a reader moves them with this."""
    rows = await session.execute(
        select(FactRow.fact_key, FactRow.merged_into)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.merged_into.is_not(None),
               FactRow.changed_version > changed_after)
    )
    return {key: into for key, into in rows}


async def add_traces(session: AsyncSession, *, tenant_id: str, memory_pk: int, traces: Iterable[Trace]) -> int:
    """Insert traces; one already written (same encoding episode, or same fact and episode) is left as it was.

    Traces are never updated, so a retried job adds nothing twice. Returns how many were new.
    """
    values = [
        {"memory_pk": memory_pk, "tenant_id": tenant_id, "episode_key": t.episode_id, "fact_key": t.fact_id,
         "at": t.at, "score": t.score, "counted": t.counted, "encoding": t.encoding}
        for t in traces
    ]
    if not values:
        return 0
    result = await session.execute(
        insert(TraceRow).values(values).on_conflict_do_nothing().returning(TraceRow.id)
    )
    return len(result.all())


def _facts_query(tenant_id: str, memory_pk: int) -> Any:
    """Facts oldest first, their entities under the canonical names the graph gives them (the names as written
    until the lane has resolved them), with whether each is still in force (neither retired nor merged)."""
    subject, obj = aliased(EntityRow), aliased(EntityRow)
    # Columns, not rows: a fact row carries its vector and word index, which every decorate would decode.
    return (
        select(FactRow.fact_key, FactRow.note, func.coalesce(subject.name, FactRow.subject),
               func.coalesce(obj.name, FactRow.object), FactRow.milestone, FactRow.episode_keys, FactRow.at,
               FactRow.first_turn, FactRow.last_turn, FactRow.source, FactRow.conflict_with,
               and_(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None)))
        .outerjoin(subject, subject.id == FactRow.subject_entity_id)
        .outerjoin(obj, obj.id == FactRow.object_entity_id)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk)
        .order_by(FactRow.id)
    )


def _fact(row: Any) -> Fact:
    key, note, subject_name, object_name, milestone, episodes, at, first, last, source, conflict, _ = row
    return Fact(id=key, note=note, subject=subject_name, object=object_name, milestone=milestone,
                episode_ids=tuple(episodes), at=at, first_turn=first, last_turn=last, source=source,
                conflict_with=conflict)


async def load_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, block_only: bool = False) -> list[Fact]:
    """Facts in force (neither retired nor merged into another), oldest first.

    `block_only`: just those the facts block can show, written against a leaving or sealed episode; a long
    memory's other facts belong to forgotten episodes, and a decorate need not carry them."""
    query = _facts_query(tenant_id, memory_pk).where(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))
    if block_only:
        showing = (
            select(func.array_agg(EpisodeRow.episode_key))
            .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
                   EpisodeRow.state.in_((EpisodeState.LEAVING.value, EpisodeState.SEALED.value)))
            .scalar_subquery()
        )
        query = query.where(FactRow.episode_keys.overlap(showing))
    return [_fact(row) for row in await session.execute(query)]


async def changed_facts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, changed_after: int | None
) -> tuple[list[Fact], list[str]]:
    """Facts changed after the mechanism version `changed_after` (all, when None), oldest first: those in
    force, and the keys of those no longer in force."""
    query = _facts_query(tenant_id, memory_pk)
    if changed_after is not None:
        query = query.where(FactRow.changed_version > changed_after)
    in_force: list[Fact] = []
    gone: list[str] = []
    for row in await session.execute(query):
        if row[-1]:
            in_force.append(_fact(row))
        else:
            gone.append(row[0])
    return in_force, gone


async def load_boundary_scores(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int = 0
) -> dict[int, BoundaryScores]:
    """Scores keyed by a unit's first seq, as `engine.cutting.cut_closed` takes them."""
    rows = await session.execute(
        select(BoundaryScoreRow.unit_first_seq, BoundaryScoreRow.first_score, BoundaryScoreRow.last_score)
        .where(BoundaryScoreRow.tenant_id == tenant_id, BoundaryScoreRow.memory_pk == memory_pk,
               BoundaryScoreRow.unit_first_seq > after_seq)
    )
    return {seq: BoundaryScores(first=first, last=last) for seq, first, last in rows}


async def save_boundary_scores(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_pk: int,
    scores: Mapping[tuple[int, int], BoundaryScores],
    judge: str,
) -> None:
    """Scores keyed by (unit first seq, unit last seq); a unit scored already keeps its first score."""
    if not scores:
        return
    await session.execute(
        insert(BoundaryScoreRow)
        .values([
            {"memory_pk": memory_pk, "tenant_id": tenant_id, "unit_first_seq": first, "unit_last_seq": last,
             "first_score": s.first, "last_score": s.last, "judge": judge}
            for (first, last), s in scores.items()
        ])
        .on_conflict_do_nothing(index_elements=["memory_pk", "unit_first_seq"])
    )


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


async def awaiting_note(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[EpisodeRow]:
    """Leaving episodes whose facts have not been written: what a note call answers."""
    rows = await session.execute(
        select(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.state == EpisodeState.LEAVING.value, EpisodeRow.facts_written.is_(False))
        .order_by(EpisodeRow.first_seq)
        .with_for_update()
    )
    return list(rows.scalars())


def acknowledge(session: AsyncSession, *, tenant_id: str, episodes: Sequence[EpisodeRow], at: datetime) -> None:
    """The note for these episodes was taken: they seal at the next decorate once their last turn is over."""
    for row in episodes:
        engine_acknowledge(_episode(row))  # refuses an episode that is not leaving
        row.facts_written = True
        session.add(EpisodeTransition(
            memory_pk=row.memory_pk, tenant_id=tenant_id, episode_key=row.episode_key, before=row.state,
            after=row.state, reason="acknowledged", at=at,
        ))


async def keep_note_calls(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, decorate_id: str, at: datetime,
    episode_keys: Sequence[str], calls: Sequence[tuple[str, Any]], taken: bool, error: str | None,
) -> int | None:
    """Every note call of a reply, raw, whether taken or not (for inspection); returns the first one's id."""
    rows = [NoteCall(memory_pk=memory_pk, tenant_id=tenant_id, decorate_id=decorate_id, call_id=call_id,
                     arguments=arguments, taken=taken, error=error, episode_keys=list(episode_keys), at=at)
            for call_id, arguments in calls]
    session.add_all(rows)
    await session.flush()
    return rows[0].id if rows else None


def add_facts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, note_call_id: int | None, facts: Sequence[Fact]
) -> None:
    for fact in facts:
        session.add(FactRow(
            memory_pk=memory_pk, tenant_id=tenant_id, fact_key=fact.id, note=fact.note, subject=fact.subject,
            object=fact.object, milestone=fact.milestone, episode_keys=list(fact.episode_ids),
            first_turn=fact.first_turn, last_turn=fact.last_turn, at=fact.at, note_call_id=note_call_id,
            valid_from=fact.at, source=fact.source,
        ))
