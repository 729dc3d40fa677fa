"""What the memory inspector asks of the gateway: the tenant's memories, activation over time, every fact, the
workflow's address. Read-only; each answer is built from the store and the engine, never from the lane.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from contracts.errors import InvalidInput
from contracts.lane_names import workflow_id
from engine.timeline import activation_series, sample_times, span
from engine.traces import Trace, salient_traces, significance
from service.memory_state import iso
from store.db import Database
from store.repositories import episode_store, inspection, memories, salience_store

__all__ = ["CURSOR_PATTERN", "activation", "decode_cursor", "encode_cursor", "facts", "list_memories", "workflow_link"]

MAX_EPISODES = 1000


# A page's cursor is the last row's key as `<microseconds since 1970>-<row id>`: every string the pattern
# allows is a cursor the endpoint takes (the OpenAPI document says so), one it never gave out too.
CURSOR_PATTERN = r"^[0-9]{1,16}-[0-9]{1,18}$"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def encode_cursor(key: tuple[datetime, int]) -> str:
    return f"{(key[0] - _EPOCH) // timedelta(microseconds=1)}-{key[1]}"


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    if not re.fullmatch(CURSOR_PATTERN.strip("^$"), cursor):
        raise InvalidInput("cursor: not a cursor this endpoint gave out", field="cursor")
    micros, _, pk = cursor.partition("-")
    return _EPOCH + timedelta(microseconds=int(micros)), int(pk)


async def list_memories(
    db: Database, *, tenant_id: str, limit: int, cursor: str | None, prefix: str | None
) -> dict[str, Any]:
    after = decode_cursor(cursor) if cursor else None
    async with db.session() as session:
        # One more than asked says whether another page follows.
        rows = await inspection.list_memories(session, tenant_id=tenant_id, limit=limit + 1, after=after,
                                              prefix=prefix)
    page = rows[:limit]
    return {
        "memories": [
            {"memory_id": r.memory_id, "created_at": r.created_at.isoformat(),
             "last_activity_at": r.last_activity_at.isoformat(), "last_user_message_at": iso(r.last_user_message_at),
             "messages": r.messages, "turns": r.turns, "facts": r.facts, "episodes": r.episodes,
             "note_ask_pending": r.note_ask_pending}
            for r in page
        ],
        "next_cursor": encode_cursor(page[-1].key) if len(rows) > limit else None,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


async def activation(
    db: Database,
    *,
    tenant_id: str,
    memory_id: str,
    now: datetime,
    start: datetime | None,
    end: datetime | None,
    points: int,
    first_turn: int | None,
    last_turn: int | None,
    limit: int,
    newest: bool = False,
    salience: bool = True,
) -> dict[str, Any]:
    """Activation of the episodes overlapping [first_turn, last_turn] at `points` moments, their significance,
    act and salience, and the fades and sleeps, so a plot can show why each episode left when it did."""
    async with db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        episodes = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=memory.id)
        chosen = [e for e in episodes if (first_turn is None or e.last_turn >= first_turn)
                  and (last_turn is None or e.first_turn <= last_turn)]
        shown = chosen[-limit:] if newest else chosen[:limit]
        traces = await inspection.episode_traces(session, tenant_id=tenant_id, memory_pk=memory.id,
                                                 episode_keys=[e.id for e in shown])
        marks = await inspection.markers(session, tenant_id=tenant_id, memory_pk=memory.id)
        acts = await salience_store.acts(session, tenant_id=tenant_id, memory_pk=memory.id,
                                         episode_keys=[e.id for e in shown])
    # The memory's own time never goes backwards: a memory grown with X-Lethe-Now is plotted up to its time.
    now = max(now, memory.latest_at or now)
    natural_start, natural_end = span(shown, now)
    # One bound alone keeps the natural window's length on its side, so any time the document allows plots.
    if start is None and end is not None and end < natural_start:
        start = end - (natural_end - natural_start)
    if end is None and start is not None and start > natural_end:
        end = start + (natural_end - natural_start)
    start, end = start or natural_start, end or natural_end
    if end < start:
        raise InvalidInput("from must be before to", field="from")
    times = sample_times(start, end, points)
    own: dict[str, list[Trace]] = defaultdict(list)
    for trace in traces:
        own[trace.episode_id or ""].append(trace)
    series = activation_series(shown, traces, times, salience=salience)
    return {
        "memory_id": memory.memory_id,
        "now": now.isoformat(),
        "from": start.isoformat(),
        "to": end.isoformat(),
        "times": [t.isoformat() for t in times],
        "episodes_total": len(episodes),
        "truncated": len(chosen) > len(shown),
        "episodes": [
            {"id": e.id, "state": e.state.value, "first_turn": e.first_turn, "last_turn": e.last_turn,
             "at": e.at.isoformat(), "significance": _round(significance(salient_traces(e, own[e.id],
                                                                                        salience=salience))),
             "activation": [_round(v) for v in series[e.id]], "act": acts.get(e.id), "salience": e.salience}
            for e in shown
        ],
        "markers": [
            {"reason": m.reason, "at": m.at.isoformat(), "turn": m.turn, "episodes": m.episodes} for m in marks
        ],
    }


async def facts(db: Database, *, tenant_id: str, memory_id: str) -> dict[str, Any]:
    """Every fact the memory ever held, current (no `retired_at`) and retired, with all their fields."""
    async with db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        rows = await inspection.fact_rows(session, tenant_id=tenant_id, memory_pk=memory.id)
    return {
        "memory_id": memory.memory_id,
        "facts": [{k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in row.items()} for row in rows],
    }


async def workflow_link(
    db: Database, *, tenant_id: str, memory_id: str, namespace: str, ui_url: str
) -> dict[str, Any]:
    """The memory's workflow and, when the Temporal UI's address is known, the page that shows it."""
    async with db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
    wid = workflow_id(tenant_id, memory.memory_id)
    url = f"{ui_url.rstrip('/')}/namespaces/{quote(namespace, safe='')}/workflows/{quote(wid, safe='')}" \
        if ui_url else None
    return {"workflow_id": wid, "namespace": namespace, "temporal_ui_url": url}
