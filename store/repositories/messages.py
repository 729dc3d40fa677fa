"""Messages as they were sent, numbered within their memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.messages import StoredMessage
from engine.recognition import HeldMessage
from store.models import Episode as EpisodeRow
from store.models import Memory, Message

__all__ = ["NewMessage", "append_messages", "held_messages", "stored_messages"]


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
    session: AsyncSession, *, tenant_id: str, memory_pk: int, recent: int | None = None
) -> list[StoredMessage]:
    """The memory's messages in order. With `recent`, messages inside sealed or forgotten episodes are left
    out, except the last `recent` ones: out of view, only recent turns' sizes and times still matter."""
    query = (
        select(Message.seq, Message.turn, Message.at, Message.body, Message.tokens)
        .where(Message.tenant_id == tenant_id, Message.memory_pk == memory_pk)
        .order_by(Message.seq)
    )
    if recent is not None:
        hidden = exists().where(
            EpisodeRow.memory_pk == memory_pk, EpisodeRow.state.in_(("sealed", "forgotten")),
            Message.seq.between(EpisodeRow.first_seq, EpisodeRow.last_seq),
        )
        newest = select(Memory.last_message_seq).where(Memory.id == memory_pk).scalar_subquery()
        query = query.where(or_(~hidden, Message.seq > newest - recent))
    rows = await session.execute(query)
    return [StoredMessage(seq=seq, turn=turn, at=at, body=body, tokens=tokens) for seq, turn, at, body, tokens in rows]


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
