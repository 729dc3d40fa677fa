"""Facts as the mechanism reads them (the facts block, traces) and adds them from a note.

The hot path and the lane both go through here under the memory's row lock (`memories.lock_memory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.episodes import EpisodeState
from engine.facts import Fact
from store.models import EntityRow, EpisodeRow, FactRow

__all__ = ["add_facts", "changed_facts", "load_facts", "merged_facts", "open_questions", "settle_question"]


async def merged_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, changed_after: int) -> dict[str, str]:
    """Facts merged into another since the mechanism version `changed_after`: key -> the fact that stands.
    Traces read before the merge still name the merged fact; a reader moves them with this."""
    rows = await session.execute(
        select(FactRow.fact_key, FactRow.merged_into)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.merged_into.is_not(None),
               FactRow.changed_version > changed_after)
    )
    return {key: into for key, into in rows}


def _facts_query() -> Any:
    """Facts oldest first, their entities under the canonical names the graph gives them (the names as written
    until the lane has resolved them), with whether each is still in force (neither retired nor merged). The
    memory is bound at execution (`tenant_id`, `memory_pk`)."""
    subject, obj, corrected = aliased(EntityRow), aliased(EntityRow), aliased(FactRow)
    # A correction's corrected claims' episodes (engine.claims.in_front): their messages may still be in view.
    corrects = (
        select(func.array_agg(func.array_to_string(corrected.episode_keys, ",")))
        .where(corrected.memory_pk == FactRow.memory_pk, corrected.retired_by == FactRow.fact_key,
               corrected.retired_as == "correction")
        .correlate(FactRow).scalar_subquery()
    )
    # Columns, not rows: a fact row carries its vector and word index, which every decorate would decode.
    return (
        select(FactRow.fact_key, FactRow.note, func.coalesce(subject.name, FactRow.subject),
               func.coalesce(obj.name, FactRow.object), FactRow.milestone, FactRow.episode_keys, FactRow.at,
               FactRow.first_turn, FactRow.last_turn, FactRow.source, FactRow.conflict_with, FactRow.kind,
               FactRow.settled_by, corrects, and_(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None)))
        .outerjoin(subject, subject.id == FactRow.subject_entity_id)
        .outerjoin(obj, obj.id == FactRow.object_entity_id)
        .where(FactRow.tenant_id == bindparam("tenant_id"), FactRow.memory_pk == bindparam("memory_pk"))
        .order_by(FactRow.id)
    )


# Each read's statement is built once: building the aliased joins cost a decorate more than running them.
@cache
def _in_force(block_only: bool) -> Any:
    query = _facts_query().where(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))
    if block_only:
        showing = (
            select(func.array_agg(EpisodeRow.episode_key))
            .where(EpisodeRow.tenant_id == bindparam("tenant_id"), EpisodeRow.memory_pk == bindparam("memory_pk"),
                   EpisodeRow.state.in_((EpisodeState.LEAVING.value, EpisodeState.SEALED.value)))
            .scalar_subquery()
        )
        query = query.where(or_(FactRow.episode_keys.overlap(showing), FactRow.kind.in_(("constraint", "correction"))))
    return query


@cache
def _changed(since: bool) -> Any:
    query = _facts_query()
    return query.where(FactRow.changed_version > bindparam("changed_after")) if since else query


@cache
def _open_questions() -> Any:
    return _facts_query().where(FactRow.kind == "open_question", FactRow.settled_by.is_(None),
                                FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))


def _fact(row: Any) -> Fact:
    (key, note, subject_name, object_name, milestone, episodes, at, first, last, source, conflict, kind, settled,
     corrects, _) = row
    return Fact(id=key, note=note, subject=subject_name, object=object_name, milestone=milestone,
                episode_ids=tuple(episodes), at=at, first_turn=first, last_turn=last, source=source,
                conflict_with=conflict, kind=kind, settled_by=settled,
                corrects_episodes=tuple(e for joined in corrects or () for e in joined.split(",") if e))


async def load_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, block_only: bool = False) -> list[Fact]:
    """Facts in force (neither retired nor merged into another), oldest first.

    `block_only`: just those the facts block can show, written against a leaving or sealed episode, and the
    constraints (shown while the memory holds them); a long memory's other facts belong to forgotten episodes,
    and a decorate need not carry them."""
    rows = await session.execute(_in_force(block_only), {"tenant_id": tenant_id, "memory_pk": memory_pk})
    return [_fact(row) for row in rows]


async def changed_facts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, changed_after: int | None
) -> tuple[list[Fact], list[str]]:
    """Facts changed after the mechanism version `changed_after` (all, when None), oldest first: those in
    force, and the keys of those no longer in force."""
    params: dict[str, Any] = {"tenant_id": tenant_id, "memory_pk": memory_pk}
    if changed_after is not None:
        params["changed_after"] = changed_after
    in_force: list[Fact] = []
    gone: list[str] = []
    for row in await session.execute(_changed(changed_after is not None), params):
        if row[-1]:
            in_force.append(_fact(row))
        else:
            gone.append(row[0])
    return in_force, gone


def add_facts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, note_call_id: int | None, facts: Sequence[Fact]
) -> None:
    for fact in facts:
        session.add(FactRow(
            memory_pk=memory_pk, tenant_id=tenant_id, fact_key=fact.id, note=fact.note, subject=fact.subject,
            object=fact.object, milestone=fact.milestone, episode_keys=list(fact.episode_ids),
            first_turn=fact.first_turn, last_turn=fact.last_turn, at=fact.at, note_call_id=note_call_id,
            valid_from=fact.at, source=fact.source, kind=fact.kind,
        ))


async def settle_question(session: AsyncSession, *, tenant_id: str, memory_pk: int, question: str, by: str,
                          at: datetime) -> None:
    """Mark an open question settled by a later fact (kept, dated, no longer listed as open)."""
    await session.execute(
        update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                              FactRow.fact_key == question, FactRow.kind == "open_question",
                              FactRow.settled_by.is_(None))
        .values(settled_by=by, settled_at=at))


async def open_questions(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[Fact]:
    """The memory's open questions in force that nothing has settled yet, oldest first."""
    rows = await session.execute(_open_questions(), {"tenant_id": tenant_id, "memory_pk": memory_pk})
    return [_fact(row) for row in rows]
