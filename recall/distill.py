"""The lane's distill: once a later user message has arrived, reread each earlier turn's recall block against
the turn's reply and the message after it, keep what they used or touch and did not already say, and rewrite or
remove it.

Idempotent by turn: a turn's block is distilled once, so a retry or a second run changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from engine.blocks.recall_block import render_recall_block
from engine.recall.grouping import RecalledFact, admissible, group
from engine.texts import messages_text
from providers.judge import Judge
from providers.usage import UsageScope
from recall.config import RecallConfig
from store.db import Database
from store.repositories import recall_blocks, recall_reads

__all__ = ["distill_blocks"]

_log = logging.getLogger(__name__)


async def distill_blocks(db: Database, judge: Judge, config: RecallConfig, *, tenant_id: str, memory_id: str,
                         log: logging.Logger | logging.LoggerAdapter[Any] = _log) -> int:
    """Distill every block of the memory's earlier turns not yet distilled. Returns how many it distilled.
    `log`: where each is told (the activity's logger, under Temporal)."""
    async with db.session() as session:
        known = await recall_reads.memory_turn(session, tenant_id=tenant_id, memory_id=memory_id)
        if known is None:
            return 0
        pk, last_turn = known
        pending = await recall_blocks.recall_blocks(session, tenant_id=tenant_id, memory_pk=pk,
                                                    undistilled_before=last_turn)
    done = 0
    for block in pending:
        done += await _distill(db, judge, config, tenant_id, memory_id, pk, block, log)
    return done


async def _distill(db: Database, judge: Judge, config: RecallConfig, tenant_id: str, memory_id: str, pk: int,
                   block: recall_blocks.StoredBlock,
                   log: logging.Logger | logging.LoggerAdapter[Any]) -> int:
    async with db.session() as session:
        messages = await recall_reads.turn_messages(session, tenant_id=tenant_id, memory_pk=pk,
                                                    first_turn=block.turn, last_turn=block.turn + 1)
    # What answered the turn and the first message of the next (the user's reaction tells what mattered): the
    # turn's own user message is left out, for the block was found because it touched that message, and a
    # block the reply did not use and the next message does not touch has done its work.
    turn = [m for m in messages if m.turn == block.turn]
    around = [m for m in turn if m.kind != "user"] + [m for m in messages if m.turn > block.turn][:1]
    conversation = messages_text(around, limit=config.distill_conversation_chars)
    texts = [i.note if isinstance(i, RecalledFact) else i.text for i in block.items]
    verdicts = await judge.judge_distill(conversation, texts, scope=UsageScope(tenant_id, memory_id))
    # A kept earlier value whose replacement was not kept goes too: it is never shown alone.
    kept = group(admissible([i for i, v in zip(block.items, verdicts, strict=True) if v.keep])).items()
    text = render_recall_block(group(kept))
    # Dated by the message that closed the turn, like everything else the memory records.
    at = around[-1].at if around else turn[-1].at if turn else block.at
    async with db.session() as session, session.begin():
        changed = await recall_blocks.distill_block(session, tenant_id=tenant_id, memory_pk=pk, turn=block.turn,
                                                    text=text, kept=kept, at=at)
    log.info("recall block distilled", extra={
        "memory_id": memory_id, "turn": block.turn, "kept": len(kept), "of": len(block.items)})
    return int(changed)
