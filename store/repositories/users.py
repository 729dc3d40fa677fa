"""Users: a memory bound to the person it belongs to, and the hidden memory that holds that person's graph."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import String, literal, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.users import feeds, profile_in_force
from store.models import FactRow, MemoryRow
from store.models.users import SourceProfileRow, UserRow
from store.records import MemoryRecord, row_of
from store.repositories import memories, outbox
from store.repositories.user_recall import graph_memory_id

__all__ = ["FED_EVENT", "UserLink", "bind_memory", "bound_user", "ensure_user", "feed_user_graph", "profile"]

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
