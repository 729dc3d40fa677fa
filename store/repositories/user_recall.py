"""What recall reads to cross conversations: the graph memory of a memory's user, and where each fact and
passage of that graph came from (a fact of this very conversation is in its own graph already)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import MemoryRow
from store.models.users import UserRow

__all__ = ["UserGraph", "graph_memory_id", "user_graph"]


def graph_memory_id(user_id: str) -> str:
    """The memory id of a user's graph: `~` is outside the client's alphabet, so no API path can name it."""
    return f"~user:{user_id}"


@dataclass(frozen=True)
class UserGraph:
    """The user's graph memory (by id: recall reads it as any memory), and this conversation's pk if stored."""

    memory_id: str
    own_pk: int | None
    # The conversation belongs to the user (not only named by this call): that never changes, so it can be kept.
    bound: bool = False


async def user_graph(session: AsyncSession, *, tenant_id: str, memory_id: str, user_id: str | None = None
                     ) -> UserGraph | None:
    """The graph recall crosses into: the one of the user the memory belongs to, else of the user this call
    names (the first message of a new memory has no stored user yet); None when neither exists."""
    row = (await session.execute(
        select(MemoryRow.id, UserRow.user_id)
        .outerjoin(UserRow, (UserRow.id == MemoryRow.user_pk) & (UserRow.tenant_id == tenant_id))
        .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id)
    )).one_or_none()
    own_pk, bound = (row[0], row[1]) if row is not None else (None, None)
    named = bound or user_id
    if named is None:
        return None
    return UserGraph(graph_memory_id(named), own_pk, bound=bound is not None)
