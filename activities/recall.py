"""The lane's recall jobs: prepare the walk for the next user message after each reply, and distill the last
turn's recall block once the next user message has arrived.

Both are idempotent by turn: a turn's walk is written once, a turn's block distilled once, so a retry or a
second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from temporalio import activity

from activities.tracing import job_span
from contracts.lane_types import JobInput
from engine.blocks.recall_block import render_recall_block
from engine.config import MechanismConfig
from engine.messages import StoredMessage
from engine.recall.grouping import RecalledFact, admissible, group
from engine.recall.walk import walk
from engine.texts import messages_text
from providers.embedder import Embedder, prime
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import recall_blocks, recall_graph, recall_reads
from store.repositories.recall_search import Query, search_candidates

__all__ = ["RecallActivities"]

# What the judge reads of a turn: the start of its messages (the user message and the reply come first).
DIALOGUE_CHARS = 1200
CONVERSATION_CHARS = 4000


def _user_text(messages: Sequence[StoredMessage]) -> str:
    users = [m for m in messages if m.kind == "user"]
    return messages_text(users[:1], limit=DIALOGUE_CHARS) if users else ""


@dataclass
class RecallActivities:
    """Registered bound, beside the lane's: the worker owns the pool, the judge and the embedder."""

    db: Database
    judge: Judge
    embedder: Embedder
    config: MechanismConfig = MechanismConfig()  # noqa: RUF009 - frozen
    language: str = "simple"

    def all(self) -> list[object]:
        return [self.prepare_recall, self.distill_recall]

    @activity.defn
    async def prepare_recall(self, params: JobInput) -> int:
        """After a reply: walk from the memory's latest turn, its user message and reply, for the next message
        to find ready. Returns how many facts it rated (0 when there is nothing to walk, the walk is already
        there, or the latest turn has no reply yet). It reads the memory's newest turn, not its event's, so
        it can run ahead of the lane (`workflows.memory`, `RECALL_AHEAD_PATCH`)."""
        memory, event = params.memory, params.event
        with job_span("prepare_recall", memory.tenant_id, event):
            async with self.db.session() as session:
                known = await recall_reads.memory_turn(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
                if known is None:
                    return 0  # erased meanwhile
                pk, turn = known
                # The walk goes from facts to facts: with none in the graph yet (passages alone are rated in the
                # hot path), there is nothing to prepare, and no message to embed or search for.
                if turn == 0 or not await recall_reads.has_facts(session, tenant_id=memory.tenant_id, memory_pk=pk):
                    return 0
                if await recall_blocks.prepared_walk(session, tenant_id=memory.tenant_id, memory_pk=pk,
                                              for_turn=turn + 1) is not None:
                    return 0
                messages = await recall_reads.turn_messages(session, tenant_id=memory.tenant_id, memory_pk=pk,
                                                      first_turn=turn, last_turn=turn)
            # Before the turn's reply is in, the walk would miss it; the report that brings it prepares it.
            if not any(m.kind not in ("user", "instruction") for m in messages):
                return 0
            scope = UsageScope(memory.tenant_id, memory.memory_id)
            dialogue = messages_text(messages, limit=DIALOGUE_CHARS)
            message = _user_text(messages) or dialogue
            vectors = await self.embedder.embed([message, dialogue], scope=scope)
            async with self.db.session() as session:
                candidates = await search_candidates(
                    session, tenant_id=memory.tenant_id, memory_pk=pk, whole=Query(message, vectors[0]),
                    dialogue=Query(dialogue, vectors[1]), parts=[], language=self.language)

                async def rate(ids: Sequence[int], via: Sequence[int]) -> list[int]:
                    read = await recall_graph.rating_texts(session, tenant_id=memory.tenant_id, memory_pk=pk, ids=ids,
                                                     via=via, dialogue=dialogue)
                    prime(self.embedder, read.vectors)
                    return [int(v.level) for v in await self.judge.rate_relevance(read.context, read.notes,
                                                                                  scope=scope)]

                async def near(ids: Sequence[int]) -> list[int]:
                    return await recall_graph.neighbours(session, tenant_id=memory.tenant_id, memory_pk=pk,
                                                         fact_ids=ids)

                levels = await walk(candidates.facts, rate=rate, neighbours=near, rules=self.config.walk_rules())
            async with self.db.session() as session, session.begin():
                await recall_blocks.save_walk(session, tenant_id=memory.tenant_id, memory_pk=pk, for_turn=turn + 1,
                                       after_seq=messages[-1].seq, levels=levels, at=messages[-1].at)
            activity.logger.info("recall walk prepared", extra={
                "memory_id": memory.memory_id, "for_turn": turn + 1, "facts": len(levels)})
            return len(levels)

    @activity.defn
    async def distill_recall(self, params: JobInput) -> int:
        """Once a later user message has arrived: reread each earlier turn's block not yet distilled against
        its turn and the message after it, keep what was relevant and not already said, rewrite or remove it.
        Returns how many blocks it distilled."""
        memory, event = params.memory, params.event
        with job_span("distill_recall", memory.tenant_id, event):
            async with self.db.session() as session:
                known = await recall_reads.memory_turn(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
                if known is None:
                    return 0
                pk, last_turn = known
                pending = await recall_blocks.recall_blocks(session, tenant_id=memory.tenant_id, memory_pk=pk,
                                                      undistilled_before=last_turn)
            done = 0
            for block in pending:
                done += await self._distill(memory.tenant_id, memory.memory_id, pk, block)
            return done

    async def _distill(self, tenant_id: str, memory_id: str, pk: int, block: recall_blocks.StoredBlock) -> int:
        async with self.db.session() as session:
            messages = await recall_reads.turn_messages(session, tenant_id=tenant_id, memory_pk=pk,
                                                  first_turn=block.turn, last_turn=block.turn + 1)
        # The turn itself, and the first message of the next (the user's reaction tells what mattered).
        around = [m for m in messages if m.turn == block.turn] + [m for m in messages if m.turn > block.turn][:1]
        conversation = messages_text(around, limit=CONVERSATION_CHARS)
        texts = [i.note if isinstance(i, RecalledFact) else i.text for i in block.items]
        verdicts = await self.judge.judge_distill(conversation, texts, scope=UsageScope(tenant_id, memory_id))
        # A kept earlier value whose replacement was not kept goes too: it is never shown alone.
        kept = group(admissible([i for i, v in zip(block.items, verdicts, strict=True) if v.keep])).items()
        text = render_recall_block(group(kept))
        # Dated by the message that closed the turn, like everything else the memory records.
        at = around[-1].at if around else block.at
        async with self.db.session() as session, session.begin():
            changed = await recall_blocks.distill_block(session, tenant_id=tenant_id, memory_pk=pk, turn=block.turn,
                                                 text=text, kept=kept, at=at)
        activity.logger.info("recall block distilled", extra={
            "memory_id": memory_id, "turn": block.turn, "kept": len(kept), "of": len(block.items)})
        return int(changed)

