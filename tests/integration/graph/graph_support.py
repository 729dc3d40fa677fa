"""Facts written as a taken note call writes them, and the graph read back by names, for lane-level tests."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from sqlalchemy import text

from engine.facts import Fact
from store.db import Database
from store.models import NoteCallRow
from store.repositories import fact_store, memories, outbox


async def write_note(db: Database, tenant_id: str, memory_id: str, call: str, notes: list[dict[str, Any]],
                     at: datetime, *, kind: str = "facts_written") -> int:
    """A note call's facts and their `facts_written` event, committed as report commits them; returns the seq.

    With another `kind`, the facts are as a memory from before the graph holds them: written, not integrated,
    and no event of theirs left to run."""
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        row = NoteCallRow(memory_pk=memory.id, tenant_id=tenant_id, decorate_id=call, call_id=f"call_{call}",
                       arguments=json.dumps({"notes": notes}), taken=True, episode_keys=[], at=at)
        session.add(row)
        await session.flush()
        facts = [Fact(id=f"{call}:{i}", note=n["note"], subject=n["subject"], object=n["object"],
                      milestone=n.get("milestone", False), episode_ids=(), at=at, first_turn=1, last_turn=1,
                      source=n.get("source", "unknown")) for i, n in enumerate(notes)]
        fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=memory.id, note_call_id=row.id, facts=facts)
        payload = {"decorate_id": call, "fact_keys": [f.id for f in facts]} if kind == "facts_written" else {}
        return outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind=kind, payload=payload)


async def graph_of(db: Database, tenant_id: str, memory_id: str) -> dict[str, Any]:
    """The memory's graph by names only (ids and keys differ between memories): what a person would compare."""
    async with db.session() as session:
        pk = (await session.execute(text("SELECT id FROM memories WHERE tenant_id = :t AND memory_id = :m"),
                                    {"t": tenant_id, "m": memory_id})).scalar_one()
        entities = (await session.execute(text(
            "SELECT e.name, array_agg(a.name ORDER BY a.name) FROM entities e JOIN entity_aliases a "
            "ON a.entity_id = e.id WHERE e.memory_pk = :pk GROUP BY e.id, e.name"), {"pk": pk})).all()
        facts = (await session.execute(text(
            "SELECT f.note, s.name, o.name, m.note, r.note, c.note, f.source FROM facts f "
            "LEFT JOIN entities s ON s.id = f.subject_entity_id LEFT JOIN entities o ON o.id = f.object_entity_id "
            "LEFT JOIN facts m ON m.memory_pk = f.memory_pk AND m.fact_key = f.merged_into "
            "LEFT JOIN facts r ON r.memory_pk = f.memory_pk AND r.fact_key = f.retired_by "
            "LEFT JOIN facts c ON c.memory_pk = f.memory_pk AND c.fact_key = f.conflict_with "
            "WHERE f.memory_pk = :pk"), {"pk": pk})).all()
    return {
        "entities": sorted((name, tuple(aliases)) for name, aliases in entities),
        "facts": sorted(tuple(str(v) for v in row) for row in facts),
    }


def items(prompt: str) -> list[tuple[int, str]]:
    return [(int(n), line) for n, line in re.findall(r"^Item (\d+): (.*)$", prompt, flags=re.MULTILINE)]
