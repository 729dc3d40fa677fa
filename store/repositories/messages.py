"""Messages as they were sent, numbered within their memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import Memory, Message

__all__ = ["NewMessage", "append_messages", "message_hashes", "messages_of"]


class NewMessage:
    __slots__ = ("body", "content_hash", "role", "turn")

    def __init__(self, *, body: dict[str, Any], role: str, content_hash: str, turn: int) -> None:
        self.body = body
        self.role = role
        self.content_hash = content_hash
        self.turn = turn


async def message_hashes(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[str]:
    rows = await session.execute(
        select(Message.content_hash)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk)
        .order_by(Message.seq)
    )
    return list(rows.scalars())


async def messages_of(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[Message]:
    rows = await session.execute(
        select(Message)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk)
        .order_by(Message.seq)
    )
    return list(rows.scalars())


def append_messages(
    session: AsyncSession, *, tenant_id: str, memory: Memory, new: Sequence[NewMessage], at: datetime
) -> list[Message]:
    """Number the new messages after the memory's last one; the caller holds the memory's lock."""
    if memory.tenant_id != tenant_id:
        raise ValueError("memory belongs to another tenant")
    rows = []
    for item in new:
        memory.last_message_seq += 1
        rows.append(
            Message(
                memory_pk=memory.id,
                tenant_id=tenant_id,
                seq=memory.last_message_seq,
                turn=item.turn,
                role=item.role,
                content_hash=item.content_hash,
                body=item.body,
                at=at,
            )
        )
    session.add_all(rows)
    return rows
