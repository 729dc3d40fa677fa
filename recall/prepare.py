"""The lane's prepared walk: after a reply, walk from the memory's latest turn, its user message and reply, so
the next user message finds the walk ready and the hot path only adds its own hits (`recall.find`).

Idempotent by turn: a turn's walk is written once, so a retry or a second run changes nothing. It reads the
memory's newest turn, not its event's, so it can run ahead of the lane (`workflows.memory`,
`RECALL_AHEAD_PATCH`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.messages import StoredMessage
from engine.texts import messages_text
from providers.embedder import Embedder
from providers.judge import Judge
from providers.usage import UsageScope
from recall.config import RecallConfig
from recall.walking import GraphWalk
from store.db import Database
from store.repositories import recall_blocks, recall_reads
from store.repositories.recall_search import Query, search_candidates

__all__ = ["prepare_walk"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Turn:
    """The memory's latest turn, to walk from: its pk, the turn's number and its messages."""

    pk: int
    turn: int
    messages: list[StoredMessage]


def _user_text(messages: Sequence[StoredMessage], config: RecallConfig) -> str:
    users = [m for m in messages if m.kind == "user"]
    return messages_text(users[:1], limit=config.turn_dialogue_chars) if users else ""


async def _turn_to_walk(db: Database, *, tenant_id: str, memory_id: str) -> _Turn | None:
    """The latest turn, when there is a walk to prepare from it: not when the memory is gone, holds no fact yet
    (the walk goes from facts to facts; passages alone are rated in the hot path), already has the next turn's
    walk, or the turn's reply is not in yet (the walk would miss it; the report that brings it prepares it)."""
    async with db.session() as session:
        known = await recall_reads.memory_turn(session, tenant_id=tenant_id, memory_id=memory_id)
        if known is None:
            return None  # erased meanwhile
        pk, turn = known
        if turn == 0 or not await recall_reads.has_facts(session, tenant_id=tenant_id, memory_pk=pk):
            return None
        if await recall_blocks.prepared_walk(session, tenant_id=tenant_id, memory_pk=pk, for_turn=turn + 1) is not None:
            return None
        messages = await recall_reads.turn_messages(session, tenant_id=tenant_id, memory_pk=pk, first_turn=turn,
                                                    last_turn=turn)
    if not any(m.kind not in ("user", "instruction") for m in messages):
        return None
    return _Turn(pk, turn, messages)


async def prepare_walk(db: Database, judge: Judge, embedder: Embedder, config: RecallConfig, *, tenant_id: str,
                       memory_id: str, log: logging.Logger | logging.LoggerAdapter[Any] = _log) -> int:
    """Walk from the memory's latest turn for the next user message, and save the walk. Returns how many facts
    it rated (0 when there is nothing to walk, the walk is already there, or the latest turn has no reply
    yet). `log`: where it says so (the activity's logger, under Temporal)."""
    latest = await _turn_to_walk(db, tenant_id=tenant_id, memory_id=memory_id)
    if latest is None:
        return 0
    pk, messages = latest.pk, latest.messages
    scope = UsageScope(tenant_id, memory_id)
    dialogue = messages_text(messages, limit=config.turn_dialogue_chars)
    message = _user_text(messages, config) or dialogue
    vectors = await embedder.embed([message, dialogue], scope=scope)
    async with db.session() as session:
        candidates = await search_candidates(
            session, tenant_id=tenant_id, memory_pk=pk, whole=Query(message, vectors[0]),
            dialogue=Query(dialogue, vectors[1]), parts=[], language=config.language)
        graph = GraphWalk(session, judge, embedder, config.walk_rules(), tenant_id, pk, dialogue, scope)
        levels = await graph.facts(candidates.facts)
    async with db.session() as session, session.begin():
        await recall_blocks.save_walk(session, tenant_id=tenant_id, memory_pk=pk, for_turn=latest.turn + 1,
                                      after_seq=messages[-1].seq, levels=levels, at=messages[-1].at)
    log.info("recall walk prepared", extra={"memory_id": memory_id, "for_turn": latest.turn + 1,
                                             "facts": len(levels)})
    return len(levels)
