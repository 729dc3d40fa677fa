"""A memory as its owner sees it: its state now, everything it holds (export), and its erasure."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from engine.blocks.facts_block import render_facts_block
from engine.episodes import EpisodeState
from engine.planning import facts_in_block
from engine.planning.view import in_view_ids
from engine.traces import episode_activations, fact_activations, salient_traces, significance
from service.relay import TemporalClient, end_workflow
from store.db import Database
from store.repositories import episode_store, export, fact_store, graph, memories, recall_blocks, trace_store

log = logging.getLogger(__name__)

__all__ = ["erase", "export_chunks", "iso", "memory_state"]


def iso(value: datetime | None) -> str | None:
    """A time as the API writes it (RFC 3339), or None."""
    return value.isoformat() if value else None


async def memory_state(db: Database, *, tenant_id: str, memory_id: str, now: datetime,
                       weigh_kinds: bool = True, salience: bool = True) -> dict[str, Any]:
    async with db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        rows = await episode_store.load_episode_rows(session, tenant_id=tenant_id, memory_pk=memory.id)
        episodes = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=memory.id)
        traces = await trace_store.load_traces(session, tenant_id=tenant_id, memory_pk=memory.id)
        facts = await fact_store.load_facts(session, tenant_id=tenant_id, memory_pk=memory.id)
        count = await memories.count_messages(session, tenant_id=tenant_id, memory_pk=memory.id)
        counts = await graph.graph_counts(session, tenant_id=tenant_id, memory_pk=memory.id)
        blocks = await recall_blocks.recall_blocks(session, tenant_id=tenant_id, memory_pk=memory.id)
    activations = episode_activations(episodes, traces, now, salience=salience)
    by_episode: dict[str, list[Any]] = {}
    for trace in traces:  # grouped once: a scan per episode is quadratic at thousands of episodes
        if trace.episode_id is not None:
            by_episode.setdefault(trace.episode_id, []).append(trace)
    by_key = {e.id: e for e in episodes}
    sealed = frozenset(e.id for e in episodes if e.state is EpisodeState.SEALED)
    facts_block = render_facts_block(facts_in_block(facts, sealed, in_view_ids(episodes), weigh_kinds=weigh_kinds),
                                     fact_activations([f.id for f in facts], traces, now), weigh_kinds=weigh_kinds)
    awaiting = [r for r in rows if r.state == EpisodeState.LEAVING.value and not r.facts_written]
    asked = [r.asked_at for r in awaiting if r.asked_at]
    return {
        "memory_id": memory.memory_id,
        "created_at": memory.created_at.isoformat(),
        "now": now.isoformat(),
        "messages": count,
        "turns": memory.last_turn,
        "events": memory.last_event_seq,
        "facts": len(facts),
        "graph": counts,
        "last_user_message_at": iso(memory.last_user_message_at),
        "facts_block": facts_block,
        "note_ask": {
            "pending": bool(awaiting),
            "turns": [min(r.first_turn for r in awaiting), max(r.last_turn for r in awaiting)] if awaiting else None,
            "since": iso(min(asked)) if asked else None,
            "asks": max((r.asks for r in awaiting), default=0),
        },
        "episodes": [
            {
                "id": row.episode_key, "state": row.state, "first_turn": row.first_turn, "last_turn": row.last_turn,
                "first_seq": row.first_seq, "last_seq": row.last_seq, "tokens": row.tokens,
                "facts_written": row.facts_written, "sealed_without_facts": row.sealed_without_facts,
                "activation": round(activations[row.episode_key], 6),
                "significance": round(significance(salient_traces(
                    by_key[row.episode_key], by_episode.get(row.episode_key, ()), salience=salience)), 6),
                # Salience: what kind of moment it was and how strongly it was encoded (None until judged).
                "act": row.act, "salience": row.salience,
            }
            for row in rows
        ],
        "recall_blocks": [
            {
                "turn": b.turn, "before_seq": b.before_seq, "provenance": b.provenance, "at": b.at.isoformat(),
                "placed": b.text, "fact_ids": b.fact_ids, "passage_ids": b.passage_ids,
                "distilled": b.distilled_text, "distilled_fact_ids": b.distilled_fact_ids,
                "distilled_passage_ids": b.distilled_passage_ids, "removed": b.removed,
                "distilled_at": iso(b.distilled_at),
            }
            for b in blocks
        ],
    }


async def export_chunks(db: Database, *, tenant_id: str, memory_id: str) -> AsyncIterator[bytes]:
    """Everything the memory holds as one JSON document, streamed section by section, row by row.

    The memory is looked up before the first byte, so a missing one is still a clean 404.
    """
    session_cm = db.session()
    session = await session_cm.__aenter__()
    try:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
    except BaseException:
        await session_cm.__aexit__(None, None, None)
        raise

    async def chunks() -> AsyncIterator[bytes]:
        try:
            head = export.memory_row(memory)
            yield b'{"memory": ' + json.dumps(head, default=str).encode()
            for name in export.SECTIONS:
                yield f', "{name}": ['.encode()
                first = True
                async for row in export.section_rows(session, name, tenant_id=tenant_id, memory_pk=memory.id):
                    yield (b"" if first else b", ") + json.dumps(row, default=str).encode()
                    first = False
                yield b"]"
            yield b"}\n"
        finally:
            await session_cm.__aexit__(None, None, None)

    return chunks()


async def erase(db: Database, temporal: TemporalClient, *, tenant_id: str, memory_id: str) -> bool:
    """Delete everything the memory holds, then end its workflow; returns whether the workflow is gone (False
    while Temporal is away: the data is gone whatever happens, ending the workflow is best effort)."""
    # The lane may hold the same memory's rows (graph, traces) while erase deletes them all: retried, not a 500.
    await db.transact(lambda session: memories.erase_memory(session, tenant_id=tenant_id, memory_id=memory_id))
    return await end_workflow(temporal, tenant_id=tenant_id, memory_id=memory_id)

