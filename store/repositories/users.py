"""Users: a memory bound to the person it belongs to, and the hidden memory that holds that person's graph."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import String, delete, func, literal, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.users import feeds, profile_in_force
from store.models import FactRow, MemoryRow
from store.models.users import SourceProfileRow, UserRow
from store.records import MemoryRecord, row_of
from store.repositories import memories, outbox
from store.repositories.user_recall import graph_memory_id

__all__ = ["FED_EVENT", "UserLink", "UserSummary", "bind_memory", "bound_user", "ensure_user", "erase_user",
           "feed_user_graph", "find_user", "linked_facts", "list_users", "profile", "set_profile",
           "user_memories"]

# The graph memory's event for facts fed into it: its lane integrates them (`workflows.jobs`).
FED_EVENT = "fed"


@dataclass(frozen=True)
class UserLink:
    user_pk: int
    user_id: str
    graph_memory_pk: int
    graph_memory_id: str


async def ensure_user(session: AsyncSession, *, tenant_id: str, user_id: str) -> UserLink:
    """The user, made with its graph memory on first sight; two first calls at once make one."""
    await session.execute(insert(UserRow).values(tenant_id=tenant_id, user_id=user_id)
                          .on_conflict_do_nothing(index_elements=["tenant_id", "user_id"]))
    user = (await session.execute(select(UserRow).where(UserRow.tenant_id == tenant_id, UserRow.user_id == user_id)
                                  .with_for_update())).scalar_one()
    graph_id = graph_memory_id(user_id)
    if user.graph_memory_pk is None:
        await session.execute(insert(MemoryRow).values(tenant_id=tenant_id, memory_id=graph_id, kind="user_graph")
                              .on_conflict_do_nothing(index_elements=["tenant_id", "memory_id"]))
        graph_pk = (await session.execute(select(MemoryRow.id).where(
            MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == graph_id))).scalar_one()
        await session.execute(update(UserRow).where(UserRow.id == user.id).values(graph_memory_pk=graph_pk))
        await session.execute(update(MemoryRow).where(MemoryRow.id == graph_pk).values(user_pk=user.id))
        user.graph_memory_pk = graph_pk
    return UserLink(user.id, user.user_id, int(user.graph_memory_pk), graph_id)


async def bound_user(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> str | None:
    """The user id the memory belongs to, if any."""
    return (await session.execute(
        select(UserRow.user_id).join(MemoryRow, MemoryRow.user_pk == UserRow.id)
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_pk))).scalar_one_or_none()


async def bind_memory(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, user_id: str) -> str | None:
    """Bind the (locked) memory to `user_id` if it has no user yet; returns the user it already had when that
    is someone else (the caller refuses), else None."""
    row = row_of(memory)
    if row.user_pk is not None:
        bound = await bound_user(session, tenant_id=tenant_id, memory_pk=row.id)
        return bound if bound != user_id else None
    link = await ensure_user(session, tenant_id=tenant_id, user_id=user_id)
    row.user_pk = link.user_pk
    return None


async def profile(session: AsyncSession, *, tenant_id: str) -> dict[str, bool]:
    """The tenant's per-source profile in force: the defaults with its own rows over them."""
    rows = await session.execute(select(SourceProfileRow.source, SourceProfileRow.feeds)
                                 .where(SourceProfileRow.tenant_id == tenant_id))
    return profile_in_force({source: fed for source, fed in rows})


async def feed_user_graph(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> int:
    """Copy the conversation's integrated facts in force that its tenant's profile lets in into its user's
    graph, each once (the origin index: a retried job adds nothing), and tell the graph's lane; returns how many
    were new. A conversation without a user, or a user's graph itself, feeds nothing."""
    link = (await session.execute(
        select(MemoryRow.memory_id, MemoryRow.agent, UserRow.user_id, UserRow.graph_memory_pk)
        .join(UserRow, UserRow.id == MemoryRow.user_pk)
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.id == memory_pk, MemoryRow.kind == "conversation")
    )).one_or_none()
    if link is None or link.graph_memory_pk is None:
        return 0
    in_force = await profile(session, tenant_id=tenant_id)
    sources = [s for s in {*in_force, "user", "assistant", "tool", "unknown", "api", "extracted"}
               if not s.startswith("agent:") and feeds(in_force, s, link.agent)]
    if not sources:
        return 0
    graph = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=graph_memory_id(link.user_id),
                                       create=False)
    copied = select(
        literal(graph.id), FactRow.tenant_id, literal("u") + FactRow.id.cast(String), FactRow.note,
        FactRow.subject, FactRow.object, FactRow.milestone, FactRow.episode_keys, FactRow.first_turn,
        FactRow.last_turn, FactRow.at, FactRow.source, FactRow.valid_from, FactRow.kind, literal(memory_pk),
        literal(link.memory_id), FactRow.fact_key,
    ).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.integrated_at.is_not(None),
            FactRow.retired_at.is_(None), FactRow.merged_into.is_(None), FactRow.source.in_(sources)
            ).order_by(FactRow.id)  # in the order they were noted: a correction after what it corrects
    result = await session.execute(
        insert(FactRow).from_select(
            ["memory_pk", "tenant_id", "fact_key", "note", "subject", "object", "milestone", "episode_keys",
             "first_turn", "last_turn", "at", "source", "valid_from", "kind", "origin_memory_pk",
             "origin_memory_id", "origin_fact_key"], copied)
        .on_conflict_do_nothing(index_elements=["memory_pk", "origin_memory_id", "origin_fact_key"],
                                index_where=FactRow.origin_fact_key.is_not(None)))
    new = int(result.rowcount or 0)  # type: ignore[attr-defined]
    if new:
        outbox.add_event(session, tenant_id=tenant_id, memory=graph, kind=FED_EVENT,
                         payload={"from": link.memory_id, "facts": new})
    return new


@dataclass(frozen=True)
class UserSummary:
    user_pk: int
    user_id: str
    created_at: datetime
    memories: int
    facts: int  # in force in the user's graph


async def find_user(session: AsyncSession, *, tenant_id: str, user_id: str) -> UserLink | None:
    row = (await session.execute(select(UserRow.id, UserRow.user_id, UserRow.graph_memory_pk).where(
        UserRow.tenant_id == tenant_id, UserRow.user_id == user_id))).one_or_none()
    if row is None or row.graph_memory_pk is None:
        return None
    return UserLink(row.id, row.user_id, int(row.graph_memory_pk), graph_memory_id(row.user_id))


async def list_users(session: AsyncSession, *, tenant_id: str, limit: int,
                     after: tuple[datetime, int] | None = None, user_pk: int | None = None) -> list[UserSummary]:
    """The tenant's users, newest first (`after`: the last key of the previous page), or the one `user_pk`."""
    conversations = (select(func.count()).where(MemoryRow.tenant_id == tenant_id, MemoryRow.user_pk == UserRow.id,
                                                MemoryRow.kind == "conversation").scalar_subquery())
    in_force = (select(func.count()).where(FactRow.tenant_id == tenant_id,
                                           FactRow.memory_pk == UserRow.graph_memory_pk,
                                           FactRow.retired_at.is_(None), FactRow.merged_into.is_(None))
                .scalar_subquery())
    query = (select(UserRow.id, UserRow.user_id, UserRow.created_at, conversations, in_force)
             .where(UserRow.tenant_id == tenant_id).order_by(UserRow.created_at.desc(), UserRow.id.desc())
             .limit(limit))
    if after is not None:
        query = query.where(tuple_(UserRow.created_at, UserRow.id) < tuple_(after[0], after[1]))
    if user_pk is not None:
        query = query.where(UserRow.id == user_pk)
    return [UserSummary(*row) for row in (await session.execute(query)).all()]


async def user_memories(session: AsyncSession, *, tenant_id: str, user_pk: int) -> list[tuple[str, datetime]]:
    """The user's conversations, most recently active first, with that time."""
    active = func.coalesce(MemoryRow.latest_at, MemoryRow.created_at)
    rows = await session.execute(
        select(MemoryRow.memory_id, active).where(MemoryRow.tenant_id == tenant_id, MemoryRow.user_pk == user_pk,
                                                  MemoryRow.kind == "conversation")
        .order_by(active.desc(), MemoryRow.id.desc()))
    return [(memory_id, at) for memory_id, at in rows]


async def erase_user(session: AsyncSession, *, tenant_id: str, user: UserLink, with_memories: bool) -> list[str]:
    """Delete the user, their graph and, `with_memories`, each of their conversations (rows cascade from the
    memory; what is keyed by a memory's name goes by name). Returns the memory ids deleted, the graph's first."""
    gone = [user.graph_memory_id]
    if with_memories:
        gone += [memory_id for memory_id, _ in await user_memories(session, tenant_id=tenant_id,
                                                                   user_pk=user.user_pk)]
    for memory_id in gone:
        await memories.erase_memory(session, tenant_id=tenant_id, memory_id=memory_id)
    # Conversations kept lose their user with it (the key is SET NULL), and can be bound again.
    await session.execute(delete(UserRow).where(UserRow.tenant_id == tenant_id, UserRow.id == user.user_pk))
    return gone


async def set_profile(session: AsyncSession, *, tenant_id: str, sources: dict[str, bool | None]) -> None:
    """Set (True/False) or clear (None: back to the default) the tenant's rows for these sources."""
    cleared = [source for source, fed in sources.items() if fed is None]
    if cleared:
        await session.execute(delete(SourceProfileRow).where(SourceProfileRow.tenant_id == tenant_id,
                                                             SourceProfileRow.source.in_(cleared)))
    for source, fed in sources.items():
        if fed is None:
            continue
        await session.execute(insert(SourceProfileRow).values(tenant_id=tenant_id, source=source, feeds=fed)
                              .on_conflict_do_update(index_elements=["tenant_id", "source"],
                                                     set_={"feeds": fed, "updated_at": func.now()}))


async def linked_facts(session: AsyncSession, *, tenant_id: str, memory_pk: int, keys: Sequence[str]
                       ) -> list[tuple[int, str]]:
    """The same facts held elsewhere, as (memory pk, fact key): in a user's graph, the conversation facts they
    were fed from; in a conversation, their copies in its user's graph. What a user forgets is forgotten in both,
    and a forgotten origin is never fed again."""
    if not keys:
        return []
    origins = await session.execute(select(FactRow.origin_memory_pk, FactRow.origin_fact_key).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.fact_key.in_(list(keys)),
        FactRow.origin_memory_pk.is_not(None), FactRow.origin_fact_key.is_not(None)))
    copies = await session.execute(select(FactRow.memory_pk, FactRow.fact_key).where(
        FactRow.tenant_id == tenant_id, FactRow.origin_memory_pk == memory_pk,
        FactRow.origin_fact_key.in_(list(keys))))
    return [(int(pk), str(key)) for pk, key in [*origins, *copies]]
