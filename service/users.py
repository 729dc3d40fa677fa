"""A memory's user: bound at the first call that names one, and never changed by a later call."""

from __future__ import annotations

from contracts.errors import Conflict
from store.db import StoreSession
from store.records import MemoryRecord
from store.repositories import users

__all__ = ["USER_HEADER", "bind_user"]

USER_HEADER = "X-Lethe-User"


async def bind_user(session: StoreSession, *, tenant_id: str, memory: MemoryRecord, user_id: str) -> None:
    """Bind the locked memory to `user_id` (made on first sight, with its graph); a memory that belongs to
    someone else is a 409, and the call changes nothing."""
    other = await users.bind_memory(session, tenant_id=tenant_id, memory=memory, user_id=user_id)
    if other is not None:
        raise Conflict(f"{USER_HEADER}: memory {memory.memory_id!r} belongs to user {other!r}, not {user_id!r}")
