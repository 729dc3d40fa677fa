"""The knowledge graph's reads and writes: facts waiting to be integrated, entities and aliases, merges,
retirements and conflicts, and the graph's figures. Searches live in `store.repositories.search`.

Every write is safe to repeat: an alias already held is kept as it is, a fact integrated is never redone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import and_, cast, func, or_, select, update
from sqlalchemy.dialects.postgresql import REGCONFIG, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from engine.graph import Action, fold
from store.models import EntityAliasRow, EntityRow, FactRow, PassageRow

__all__ = [
    "UNRESOLVED",
    "EntityView",
    "FactView",
    "add_alias",
    "apply_action",
    "create_entity",
    "entity_by_alias",
    "entity_candidates",
    "graph_counts",
    "lock_pending",
    "mark_integrated",
    "pending_fact",
    "related_facts",
    "rename_entity",
    "unintegrated_facts",
]

# Names this close by trigrams are worth asking the judge about.
NAME_SIMILARITY = 0.4
# And entities or facts this close in meaning (cosine distance).
MEANING_DISTANCE = 0.55


@dataclass(frozen=True)
class FactView:
    """A fact as the graph's rules read it, its entities under their canonical names."""

    id: int
    key: str
    note: str
    subject: str
    object: str
    milestone: bool
    source: str
    at: datetime
    conflict_with: str | None = None
    kind: str = "fact"
    settled_by: str | None = None


@dataclass(frozen=True)
class EntityView:
    id: int
    name: str
    origin: str
    aliases: tuple[str, ...]
    context: str
    # Its current facts with it as subject, as written: what describes it (engine.entities.describe).
    describing: tuple[str, ...] = ()
    # Found only as a possible holder of the role a mention names, not by its own names or meaning.
    by_role: bool = False


# An entity made for a mention that names two or more namesakes and describes none of them.
UNRESOLVED = "unresolved"


def _vector(values: Any) -> list[float]:
    return np.asarray(values, dtype=np.float32).tolist()


async def unintegrated_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, limit: int) -> list[int]:
    """Ids of the facts the lane has not yet brought into the graph, oldest first (new and backfill alike)."""
    rows = await session.execute(
        select(FactRow.id)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.integrated_at.is_(None))
        .order_by(FactRow.id).limit(limit)
    )
    return list(rows.scalars())


def _pending(tenant_id: str, memory_pk: int, fact_id: int) -> Any:
    return and_(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.id == fact_id,
                FactRow.integrated_at.is_(None))


async def pending_fact(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_id: int) -> FactView | None:
    """The fact, if it still waits for integration (a retry that lost a race finds None). Read without a lock:
    the lane asks its judge holding none, then takes its locks with `lock_pending`."""
    row = (await session.execute(
        select(FactRow.id, FactRow.fact_key, FactRow.note, FactRow.subject, FactRow.object, FactRow.milestone,
               FactRow.source, FactRow.at, FactRow.conflict_with, FactRow.kind, FactRow.settled_by)
        .where(_pending(tenant_id, memory_pk, fact_id))
    )).one_or_none()
    return None if row is None else FactView(*row)


async def lock_pending(session: AsyncSession, *, tenant_id: str, memory_pk: int, fact_id: int) -> bool | None:
    """Lock the fact once the memory's row is locked: whether it is still in force (False when it was forgotten,
    corrected or merged meanwhile), or None when it is integrated already or gone."""
    return (await session.execute(
        select(and_(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None)))
        .where(_pending(tenant_id, memory_pk, fact_id)).with_for_update()
    )).scalar_one_or_none()


async def entity_by_alias(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, name: str
) -> tuple[int, str, str] | None:
    """(id, canonical name, origin) of the entity that already has this name."""
    row = (await session.execute(
        select(EntityRow.id, EntityRow.name, EntityRow.origin)
        .join(EntityAliasRow, EntityAliasRow.entity_id == EntityRow.id)
        .where(EntityAliasRow.tenant_id == tenant_id, EntityAliasRow.memory_pk == memory_pk,
               EntityAliasRow.key == fold(name))
    )).one_or_none()
    return None if row is None else (row[0], row[1], row[2])


async def entity_candidates(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, name: str, vector: Any, limit: int = 5,
    also: Sequence[int] = (), role_words: Sequence[str] = (), by_meaning: bool = True,
) -> list[EntityView]:
    """Entities the name may denote: close by trigrams to one of their names, or close in meaning, and `also`;
    for a mention by role (`role_words`), also the subjects of current facts naming that role or one of those
    ("Alex is our CTO" for "the CTO"). Unresolved mentions are never candidates: a later name must not settle
    on a guess."""
    # Either name may be a part of the other ("Dana" in "our PM Dana"): word similarity both ways counts.
    closeness = func.greatest(func.similarity(EntityAliasRow.name, name),
                              func.word_similarity(name, EntityAliasRow.name),
                              func.word_similarity(EntityAliasRow.name, name))
    by_name = (
        select(EntityAliasRow.entity_id)
        .where(EntityAliasRow.tenant_id == tenant_id, EntityAliasRow.memory_pk == memory_pk,
               closeness >= NAME_SIMILARITY)
        .order_by(closeness.desc(), EntityAliasRow.entity_id).limit(limit)
    )
    found = set((await session.execute(by_name)).scalars()) | set(also)
    if by_meaning:
        distance = EntityRow.embedding.cosine_distance(_vector(vector))
        found |= set((await session.execute(
            select(EntityRow.id)
            .where(EntityRow.tenant_id == tenant_id, EntityRow.memory_pk == memory_pk, distance <= MEANING_DISTANCE)
            .order_by(distance, EntityRow.id).limit(limit)
        )).scalars())
    current = and_(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                   FactRow.integrated_at.is_not(None), FactRow.retired_at.is_(None), FactRow.merged_into.is_(None),
                   FactRow.subject_entity_id.is_not(None))
    if role_words:
        # Only a mention by role looks one step further, to whoever the memory says holds it.
        holding = [FactRow.note.op("~*")(rf"\m{re.escape(word)}\M") for word in role_words]
        holding += [FactRow.object_entity_id.in_(sorted(found))] if found else []
        stepped = {i for i in (await session.execute(
            select(FactRow.subject_entity_id).where(current, or_(*holding)).order_by(FactRow.id.desc()).limit(limit)
        )).scalars() if i is not None} - found
        found |= stepped
    else:
        stepped = set()
    if not found:
        return []
    entities = (await session.execute(
        select(EntityRow.id, EntityRow.name, EntityRow.origin).where(
            EntityRow.tenant_id == tenant_id, EntityRow.id.in_(sorted(found)),
            or_(EntityRow.kind.is_(None), EntityRow.kind != UNRESOLVED))
        .order_by(EntityRow.id)
    )).all()
    ids = [row[0] for row in entities]
    if not ids:
        return []
    aliases: dict[int, list[str]] = {}
    for entity_id, alias in await session.execute(
        select(EntityAliasRow.entity_id, EntityAliasRow.name)
        .where(EntityAliasRow.tenant_id == tenant_id, EntityAliasRow.entity_id.in_(ids)).order_by(EntityAliasRow.id)
    ):
        aliases.setdefault(entity_id, []).append(alias)
    context: dict[int, list[str]] = {}
    for entity_id, note in await session.execute(
        select(func.coalesce(FactRow.subject_entity_id, FactRow.object_entity_id), FactRow.note)
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
               or_(FactRow.subject_entity_id.in_(ids), FactRow.object_entity_id.in_(ids)))
        .order_by(FactRow.id).limit(4 * len(ids))
    ):
        context.setdefault(entity_id, []).append(note)
    describing: dict[int, list[str]] = {}
    for subject_id, note in await session.execute(
        select(FactRow.subject_entity_id, FactRow.note).where(current, FactRow.subject_entity_id.in_(ids))
        .order_by(FactRow.id.desc()).limit(8 * len(ids))
    ):
        if subject_id is not None:
            describing.setdefault(subject_id, []).append(note)
    return [
        EntityView(id=i, name=n, origin=o, aliases=tuple(a for a in aliases.get(i, []) if a != n),
                   context=" ".join(context.get(i, [])[:3]), describing=tuple(describing.get(i, [])),
                   by_role=i in stepped)
        for i, n, o in entities
    ]


async def create_entity(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, name: str, vector: Any, origin: str, at: datetime,
    fact_key: str, unresolved: bool = False,
) -> int:
    """A new entity under this name; an unresolved mention gets no alias, since the name is its namesakes'."""
    entity_id = (await session.execute(
        insert(EntityRow).values(memory_pk=memory_pk, tenant_id=tenant_id, name=name, embedding=_vector(vector),
                              origin=origin, at=at, kind=UNRESOLVED if unresolved else None)
        .returning(EntityRow.id)
    )).scalar_one()
    if unresolved:
        return entity_id
    await add_alias(session, tenant_id=tenant_id, memory_pk=memory_pk, entity_id=entity_id, name=name,
                    fact_key=fact_key, score=1.0, at=at)
    return entity_id


async def add_alias(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, entity_id: int, name: str, fact_key: str,
    score: float, at: datetime,
) -> None:
    await session.execute(
        insert(EntityAliasRow)
        .values(entity_id=entity_id, memory_pk=memory_pk, tenant_id=tenant_id, name=name, key=fold(name),
                fact_key=fact_key, score=score, at=at)
        .on_conflict_do_nothing(index_elements=["memory_pk", "key"])
    )


async def rename_entity(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, entity_id: int, name: str, vector: Any
) -> None:
    await session.execute(
        update(EntityRow).where(EntityRow.tenant_id == tenant_id, EntityRow.memory_pk == memory_pk,
                                EntityRow.id == entity_id)
        .values(name=name, embedding=_vector(vector))
    )
    # The facts naming it now read differently: touched, so their change stamps move (migration 0013) and
    # a gateway holding them reads them again.
    await session.execute(
        update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                              or_(FactRow.subject_entity_id == entity_id, FactRow.object_entity_id == entity_id))
        .values(subject_entity_id=FactRow.subject_entity_id)
    )


async def related_facts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, entity_ids: Sequence[int], vector: Any,
    limit: int = 12,
) -> list[FactView]:
    """Current facts a new one may restate or contradict: those sharing an entity, and the closest in meaning."""
    current = and_(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                   FactRow.integrated_at.is_not(None), FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))
    sharing = (
        select(FactRow.id).where(current, or_(FactRow.subject_entity_id.in_(list(entity_ids)),
                                              FactRow.object_entity_id.in_(list(entity_ids))))
        .order_by(FactRow.id.desc()).limit(limit)
    )
    distance = FactRow.embedding.cosine_distance(_vector(vector))
    near = select(FactRow.id).where(current, distance <= MEANING_DISTANCE).order_by(distance).limit(limit // 2)
    ids = sorted(set((await session.execute(sharing)).scalars()) | set((await session.execute(near)).scalars()))
    if not ids:
        return []
    subject, obj = aliased(EntityRow), aliased(EntityRow)
    rows = await session.execute(
        select(FactRow.id, FactRow.fact_key, FactRow.note, func.coalesce(subject.name, FactRow.subject),
               func.coalesce(obj.name, FactRow.object), FactRow.milestone, FactRow.source, FactRow.at,
               FactRow.conflict_with, FactRow.kind, FactRow.settled_by)
        .outerjoin(subject, subject.id == FactRow.subject_entity_id)
        .outerjoin(obj, obj.id == FactRow.object_entity_id)
        .where(FactRow.tenant_id == tenant_id, FactRow.id.in_(ids)).order_by(FactRow.id)
    )
    return [FactView(*row) for row in rows]


def _facts(tenant_id: str, memory_pk: int, keys: Sequence[str]) -> Any:
    return and_(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.fact_key.in_(list(keys)))


async def apply_action(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, fact: FactView, action: Action
) -> None:
    """Carry out the graph's decision for a new fact, dated by the new fact's own time."""
    if action.merge_into:
        survivor = (await session.execute(
            select(FactRow).where(_facts(tenant_id, memory_pk, [action.merge_into])).with_for_update()
        )).scalar_one()
        new_row = (await session.execute(select(FactRow.episode_keys, FactRow.first_turn, FactRow.last_turn)
                                         .where(FactRow.tenant_id == tenant_id, FactRow.id == fact.id))).one()
        survivor.episode_keys = list(dict.fromkeys([*survivor.episode_keys, *new_row[0]]))
        survivor.first_turn = min(survivor.first_turn, new_row[1])
        survivor.last_turn = max(survivor.last_turn, new_row[2])
        if action.source_upgrade:
            survivor.source = "user"
        await session.execute(update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.id == fact.id)
                              .values(merged_into=action.merge_into, merged_at=fact.at))
    reasons = dict(action.retired_as)
    for old, by in action.retire:
        await session.execute(update(FactRow).where(_facts(tenant_id, memory_pk, [old]), FactRow.retired_at.is_(None))
                              .values(retired_at=fact.at, retired_by=by, conflict_with=None,
                                      retired_as=reasons.get(old, "update")))
    if action.answers:
        await session.execute(update(FactRow).where(_facts(tenant_id, memory_pk, action.answers),
                                                    FactRow.settled_by.is_(None))
                              .values(settled_by=fact.key, settled_at=fact.at))
    if action.revises or action.correction:
        # The newer claim names what it revises, or becomes the correction it is (written even when it already
        # was one, so a gateway holding it reads it again with the episodes of what it corrected).
        await session.execute(update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.id == fact.id).values(
            revises=action.revises, kind="correction" if action.correction and fact.kind == "fact" else fact.kind))
    if action.settled:
        await session.execute(update(FactRow).where(_facts(tenant_id, memory_pk, action.settled))
                              .values(conflict_with=None))
    if action.conflicts:
        # The newer names the first it disputes; each disputed fact names the newer one.
        await session.execute(update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.id == fact.id)
                              .values(conflict_with=action.conflicts[0]))
        await session.execute(update(FactRow).where(_facts(tenant_id, memory_pk, action.conflicts))
                              .values(conflict_with=fact.key))


async def mark_integrated(
    session: AsyncSession, *, tenant_id: str, fact_id: int, subject_id: int, object_id: int, vector: Any,
    language: str, at: datetime,
) -> None:
    await session.execute(
        update(FactRow).where(FactRow.tenant_id == tenant_id, FactRow.id == fact_id).values(
            subject_entity_id=subject_id, object_entity_id=object_id, embedding=_vector(vector),
            words=func.to_tsvector(cast(language, REGCONFIG), FactRow.note), integrated_at=at)
    )


async def graph_counts(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> dict[str, int]:
    """Entities, current and retired facts, passages: what a memory's state shows of its graph."""
    current, retired, merged = (await session.execute(
        select(func.count().filter(and_(FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))),
               func.count().filter(FactRow.retired_at.is_not(None)),
               func.count().filter(FactRow.merged_into.is_not(None)))
        .where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk)
    )).one()
    entities = (await session.execute(select(func.count()).select_from(EntityRow).where(
        EntityRow.tenant_id == tenant_id, EntityRow.memory_pk == memory_pk))).scalar_one()
    passages = (await session.execute(select(func.count()).select_from(PassageRow).where(
        PassageRow.tenant_id == tenant_id, PassageRow.memory_pk == memory_pk))).scalar_one()
    return {"entities": entities, "current_facts": current, "retired_facts": retired, "merged_facts": merged,
            "passages": passages}
