"""Messages as they were sent, numbered within their memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from engine.messages import StoredMessage, item_kind
from engine.recognition import HeldMessage
from store.models import MessageRow, ReplacedMessageRow
from store.records import MemoryRecord, row_of

__all__ = ["NewMessage", "append_messages", "append_turns", "branch_from", "history_after", "replace_last",
           "stored_rows"]


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
    # The seq of the earlier user message this one edits.
    edit_of: int | None = None


async def history_after(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int = 0
) -> list[tuple[StoredMessage, HeldMessage | None]]:
    """The memory's messages past `after_seq`, in order, each with how the agent holds it (None for messages
    only Lethe has)."""
    rows = await session.execute(
        select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens,
               MessageRow.agent_hash,
               MessageRow.agent_optional)
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk, MessageRow.seq > after_seq)
        .order_by(MessageRow.seq)
    )
    return [
        (StoredMessage(seq=seq, turn=turn, at=at, body=body, tokens=tokens),
         None if agent_hash is None else HeldMessage(agent_hash, optional, item_kind(body) == "user", seq))
        for seq, turn, at, body, tokens, agent_hash, optional in rows
    ]


def append_messages(
    session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, new: Sequence[NewMessage], at: datetime
) -> list[StoredMessage]:
    """Number the new messages after the memory's last one; the caller holds the memory's lock."""
    if memory.tenant_id != tenant_id:
        raise ValueError("memory belongs to another tenant")
    counters = row_of(memory)
    rows = []
    for item in new:
        counters.last_message_seq += 1
        rows.append(MessageRow(
            memory_pk=memory.id, tenant_id=tenant_id, seq=counters.last_message_seq, turn=item.turn,
            role=item.role, content_hash=item.content_hash, body=item.body, at=at, tokens=item.tokens,
            agent_hash=item.agent_hash, agent_optional=item.agent_optional, edit_of=item.edit_of,
        ))
    session.add_all(rows)
    return [StoredMessage(seq=row.seq, turn=row.turn, at=row.at, body=row.body, tokens=row.tokens) for row in rows]


def append_turns(
    session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, new: Sequence[NewMessage], at: datetime
) -> tuple[list[StoredMessage], list[NewMessage]]:
    """Append the agent's new messages, each user message opening the memory's next turn (its time kept as
    the last user message's); returns them as stored and as numbered."""
    counters = row_of(memory)
    numbered = []
    for item in new:
        if item_kind(item.body) == "user":
            counters.last_turn += 1
            counters.last_user_message_at = at
        numbered.append(replace(item, turn=counters.last_turn))
    stored = append_messages(session, tenant_id=tenant_id, memory=memory, new=numbered, at=at)
    counters.latest_at = at
    return stored, numbered


def stored_rows(stored: Sequence[StoredMessage], new: Sequence[NewMessage]) -> list[tuple[StoredMessage,
                                                                                           HeldMessage | None]]:
    """Appended messages as the history a decorate goes on with, without reading them back."""
    return [
        (message, None if item.agent_hash is None else HeldMessage(item.agent_hash, item.agent_optional,
                                                                   item_kind(item.body) == "user", message.seq))
        for message, item in zip(stored, new, strict=True)
    ]


async def replace_last(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, seq: int, by: str,
                       at: datetime) -> None:
    """Move the memory's last message, a user message no reply followed, out of its history into
    `replaced_messages` (the export keeps it), and give its seq and turn back: the message that replaces it
    takes its place. The caller holds the memory's lock."""
    row = (await session.execute(select(MessageRow).where(
        MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory.id, MessageRow.seq == seq))).scalar_one()
    session.add(ReplacedMessageRow(memory_pk=memory.id, tenant_id=tenant_id, seq=row.seq, turn=row.turn,
                                   role=row.role, body=row.body, at=row.at, replaced_at=at, replaced_by=by))
    await session.delete(row)
    # Gone before the message replacing it takes its seq: a memory's seqs run without gaps.
    await session.flush()
    counters = row_of(memory)
    if counters.last_message_seq == row.seq:
        counters.last_message_seq -= 1
    if item_kind(row.body) == "user" and counters.last_turn == row.turn:
        counters.last_turn -= 1
    counters.history_version += 1


async def branch_from(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, seq: int) -> None:
    """An edit of the user message at `seq` branches the conversation there: the agent no longer holds that
    message and what followed it, so its later requests line up with the memory without them (they stay in
    the history, as said)."""
    await session.execute(update(MessageRow).where(
        MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory.id, MessageRow.seq >= seq,
        MessageRow.agent_hash.is_not(None)).values(agent_optional=True))
    row_of(memory).history_version += 1
