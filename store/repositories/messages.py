"""Messages as they were sent, numbered within their memory."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.messages import StoredMessage
from engine.recognition import HeldMessage
from store.models import Memory, Message

__all__ = ["NewMessage", "append_messages", "held_messages", "in_view_and_recent", "stored_messages"]


@dataclass(frozen=True)
class NewMessage:
    body: dict[str, Any]
    role: str
    content_hash: str
    turn: int
    tokens: int
    # As the agent holds it; None for messages only Lethe has.
    agent_hash: str | None
    agent_optional: bool = False


async def held_messages(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[HeldMessage]:
    """The memory's messages as the agent holds them, in order, for recognising resends."""
    rows = await session.execute(
        select(Message.agent_hash, Message.agent_optional)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk, Message.agent_hash.is_not(None))
        .order_by(Message.seq)
    )
    return [HeldMessage(agent_hash, optional) for agent_hash, optional in rows]


async def stored_messages(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int = 0
) -> list[StoredMessage]:
    """The memory's messages past `after_seq`, in order."""
    rows = await session.execute(
        select(Message.seq, Message.turn, Message.at, Message.body, Message.tokens)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk, Message.seq > after_seq)
        .order_by(Message.seq)
    )
    return [StoredMessage(seq=seq, turn=turn, at=at, body=body, tokens=tokens) for seq, turn, at, body, tokens in rows]


def in_view_and_recent(
    messages: Sequence[StoredMessage], hidden: Sequence[tuple[int, int]], *, recent: int
) -> list[StoredMessage]:
    """Messages outside sealed or forgotten episodes (`hidden` seq ranges), plus the last `recent` ones:
    out of view, only recent turns' sizes and times still matter to a decorate."""
    ranges = sorted(hidden)
    starts = [first for first, _ in ranges]
    tail_from = messages[-recent].seq if len(messages) >= recent else 0
    kept = []
    for message in messages:
        index = bisect_right(starts, message.seq) - 1
        if message.seq >= tail_from or index < 0 or message.seq > ranges[index][1]:
            kept.append(message)
    return kept


def append_messages(
    session: AsyncSession, *, tenant_id: str, memory: Memory, new: Sequence[NewMessage], at: datetime
) -> list[Message]:
    """Number the new messages after the memory's last one; the caller holds the memory's lock."""
    if memory.tenant_id != tenant_id:
        raise ValueError("memory belongs to another tenant")
    rows = []
    for item in new:
        memory.last_message_seq += 1
        rows.append(Message(
            memory_pk=memory.id, tenant_id=tenant_id, seq=memory.last_message_seq, turn=item.turn,
            role=item.role, content_hash=item.content_hash, body=item.body, at=at, tokens=item.tokens,
            agent_hash=item.agent_hash, agent_optional=item.agent_optional,
        ))
    session.add_all(rows)
    return rows
