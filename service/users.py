"""Users: a memory's user, bound at the first call that names one and never changed by a later call; and a
user's memory managed as a whole: list, read, their graph's facts (search, add, correct, forget, through the same
calls a memory's facts use, on the hidden memory that holds the graph), erase, and the tenant's profile of which
sources feed the graphs."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from contracts.errors import Conflict, InvalidInput, NotFound
from engine.users import SOURCES
from service import facts as facts_service
from service.clock import Clock
from service.context import HotPath
from service.inspector import decode_cursor, encode_cursor
from service.inspector import facts as fact_listing
from service.relay import end_workflow
from store.db import Database, StoreSession
from store.records import MemoryRecord, row_of
from store.repositories import tenants, users
from store.repositories.users import UserLink, UserSummary

__all__ = ["AGENT_HEADER", "USER_HEADER", "bind_agent", "bind_user", "erase_user", "get_profile", "get_user",
           "graph_of", "list_users", "put_profile", "user_facts"]

USER_HEADER = "X-Lethe-User"
AGENT_HEADER = "X-Lethe-Agent"
AGENT_SOURCE = re.compile(r"^agent:[A-Za-z0-9._:-]{1,100}$")


async def bind_user(session: StoreSession, *, tenant_id: str, memory: MemoryRecord, user_id: str) -> None:
    """Bind the locked memory to `user_id` (made on first sight, with its graph); a memory that belongs to
    someone else is a 409, and the call changes nothing."""
    other = await users.bind_memory(session, tenant_id=tenant_id, memory=memory, user_id=user_id)
    if other is not None:
        raise Conflict(f"{USER_HEADER}: memory {memory.memory_id!r} belongs to user {other!r}, not {user_id!r}")


def bind_agent(memory: MemoryRecord, agent: str) -> None:
    """Name the agent that runs the (locked) conversation, at the first call that names one: the tenant's profile
    may let one agent's facts into its users' graphs (`agent:<name>`). Another agent later is a 409."""
    row = row_of(memory)
    if row.agent is None:
        row.agent = agent
    elif row.agent != agent:
        raise Conflict(f"{AGENT_HEADER}: memory {memory.memory_id!r} is run by agent {row.agent!r}, not {agent!r}")


async def graph_of(db: Database, *, tenant_id: str, user_id: str) -> UserLink:
    """The user and the memory id of their graph; 404 for a user this tenant does not have."""
    async with db.session() as session:
        user = await users.find_user(session, tenant_id=tenant_id, user_id=user_id)
    if user is None:
        raise NotFound(f"no user {user_id!r}")
    return user


def _summary(user: UserSummary) -> dict[str, Any]:
    return {"user_id": user.user_id, "created_at": user.created_at.isoformat(), "memories": user.memories,
            "facts": user.facts}


async def list_users(db: Database, *, tenant_id: str, limit: int, cursor: str | None) -> dict[str, Any]:
    """The tenant's users, newest first, `limit` per page."""
    after = decode_cursor(cursor) if cursor else None
    async with db.session() as session:
        found = await users.list_users(session, tenant_id=tenant_id, limit=limit + 1, after=after)
    page = found[:limit]
    more = len(found) > limit
    return {"users": [_summary(user) for user in page],
            "next_cursor": encode_cursor((page[-1].created_at, page[-1].user_pk)) if more else None}


async def get_user(db: Database, *, tenant_id: str, user_id: str) -> dict[str, Any]:
    """The user, their conversations, how many facts their graph holds in force, and the profile in force."""
    user = await graph_of(db, tenant_id=tenant_id, user_id=user_id)
    async with db.session() as session:
        (summary,) = await users.list_users(session, tenant_id=tenant_id, limit=1, user_pk=user.user_pk)
        conversations = await users.user_memories(session, tenant_id=tenant_id, user_pk=user.user_pk)
        profile = await users.profile(session, tenant_id=tenant_id)
    return {"user_id": user.user_id, "created_at": summary.created_at.isoformat(),
            "memories": [{"memory_id": memory_id, "last_active_at": _iso(at)} for memory_id, at in conversations],
            "facts_in_force": summary.facts, "profile": profile}


async def user_facts(db: Database, *, tenant_id: str, user_id: str) -> dict[str, Any]:
    """Every fact the user's graph ever held, current and retired, each with the conversation it came from."""
    user = await graph_of(db, tenant_id=tenant_id, user_id=user_id)
    listing = await fact_listing(db, tenant_id=tenant_id, memory_id=user.graph_memory_id)
    return {"user_id": user.user_id,
            "facts": [{**fact, "origin_fact_id": fact.get("origin_fact_key")} for fact in listing["facts"]]}


async def search(ctx: HotPath, *, tenant_id: str, user_id: str, query: str, limit: int) -> dict[str, Any]:
    user = await graph_of(ctx.db, tenant_id=tenant_id, user_id=user_id)
    found = await facts_service.search(ctx, tenant_id=tenant_id, memory_id=user.graph_memory_id, query=query,
                                       limit=limit)
    return _as_user(found, user)


async def add(ctx: HotPath, *, tenant_id: str, user_id: str, body: Any, clock: Clock,
              idempotency_key: str | None) -> bytes:
    user = await graph_of(ctx.db, tenant_id=tenant_id, user_id=user_id)
    return await facts_service.add(ctx, tenant_id=tenant_id, memory_id=user.graph_memory_id, body=body,
                                   clock=clock, idempotency_key=idempotency_key, owner={"user_id": user_id})


async def correct(ctx: HotPath, *, tenant_id: str, user_id: str, fact_id: str, body: Any, clock: Clock,
                  idempotency_key: str | None) -> bytes:
    user = await graph_of(ctx.db, tenant_id=tenant_id, user_id=user_id)
    return await facts_service.correct(ctx, tenant_id=tenant_id, memory_id=user.graph_memory_id,
                                       fact_id=fact_id, body=body, clock=clock, idempotency_key=idempotency_key,
                                       owner={"user_id": user_id})


async def forget(ctx: HotPath, *, tenant_id: str, user_id: str, fact_id: str, erase: bool, clock: Clock
                 ) -> dict[str, Any]:
    user = await graph_of(ctx.db, tenant_id=tenant_id, user_id=user_id)
    done = await facts_service.forget(ctx, tenant_id=tenant_id, memory_id=user.graph_memory_id, fact_id=fact_id,
                                      erase=erase, clock=clock)
    return _as_user(done, user)


async def erase_user(ctx: HotPath, temporal: Any, *, tenant_id: str, user_id: str, with_memories: bool
                     ) -> dict[str, Any]:
    """Erase the user and their graph, with `with_memories` every conversation of theirs, in one transaction;
    then end those memories' workflows (best effort: the data is gone whatever Temporal does)."""
    user = await graph_of(ctx.db, tenant_id=tenant_id, user_id=user_id)

    async def erase(session: StoreSession) -> list[str]:
        # Re-read inside the transaction: a user erased meanwhile is a 404, not a second erasure.
        found = await users.find_user(session, tenant_id=tenant_id, user_id=user_id)
        if found is None:
            raise NotFound(f"no user {user_id!r}")
        return await users.erase_user(session, tenant_id=tenant_id, user=found, with_memories=with_memories)

    gone = await ctx.db.transact(erase)
    ended = [await end_workflow(temporal, tenant_id=tenant_id, memory_id=memory_id) for memory_id in gone]
    return {"user_id": user.user_id, "erased": True, "memories": [m for m in gone if m != user.graph_memory_id],
            "workflows_ended": all(ended)}


async def get_profile(db: Database, *, tenant_id: str) -> dict[str, Any]:
    async with db.session() as session:
        await _tenant(session, tenant_id)
        return {"tenant_id": tenant_id, "profile": await users.profile(session, tenant_id=tenant_id)}


async def put_profile(db: Database, *, tenant_id: str, body: Any) -> dict[str, Any]:
    """Set sources on or off (true/false) or back to the default (null), leaving the others as they are."""
    if not isinstance(body, dict) or not isinstance(body.get("profile"), dict):
        raise InvalidInput("profile: required, an object of source: true, false or null", field="profile")
    for name in body:
        if name != "profile":
            raise InvalidInput(f"{name}: not a field of this call (it takes profile)", field=name)
    sources: dict[str, bool | None] = body["profile"]
    for source, fed in sources.items():
        if source not in SOURCES and not AGENT_SOURCE.match(source):
            raise InvalidInput(f"profile.{source}: not a source (one of {', '.join(SOURCES)}, or agent:<name>)",
                               field=f"profile.{source}")
        if fed is not None and not isinstance(fed, bool):
            raise InvalidInput(f"profile.{source}: must be true, false or null", field=f"profile.{source}")

    async def write(session: StoreSession) -> None:
        await _tenant(session, tenant_id)
        await users.set_profile(session, tenant_id=tenant_id, sources=sources)

    await db.transact(write)
    return await get_profile(db, tenant_id=tenant_id)


async def _tenant(session: StoreSession, tenant_id: str) -> None:
    if not await tenants.tenant_exists(session, tenant_id=tenant_id):
        raise NotFound(f"no tenant {tenant_id!r}")


def _as_user(answer: dict[str, Any], user: UserLink) -> dict[str, Any]:
    """A graph memory's answer in the user's words: the user's id, never the hidden memory's."""
    return {"user_id": user.user_id, **{k: v for k, v in answer.items() if k != "memory_id"}}


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
