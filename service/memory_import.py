"""A memory rebuilt from the document its export produced (`POST /v1/memories/{id}/import`).

The memory must not exist yet: importing over a memory would merge two histories. The document is checked
whole before anything is written (a 422 names the section, row and field at fault), then written in one
transaction; its lane is then told, and embeds what an export leaves out. Export, erase, import and export
again give the same document apart from row ids, the times rows were stored at, change stamps, and the event
counter (the import is itself an event of the memory's).
"""

from __future__ import annotations

from typing import Any

from contracts.errors import Conflict, InvalidInput
from engine.recognition import rehashed
from store.db import Database, StoreSession
from store.repositories import lane, memories, memory_import, outbox
from store.repositories.export import SECTIONS

__all__ = ["IMPORTED_EVENT", "import_memory"]

IMPORTED_EVENT = "imported"


def _checked(document: Any) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    if not isinstance(document, dict):
        raise InvalidInput("the body must be an export document (a JSON object)", field="body")
    if "memory" not in document:
        raise InvalidInput("memory: required (the export's head)", field="memory")
    for name in document:
        if name != "memory" and name not in SECTIONS:
            raise InvalidInput(f"{name}: not a section of an export", field=name)
    head = memory_import.checked_head(document["memory"])
    sections = {name: memory_import.checked_rows(name, document.get(name, [])) for name in SECTIONS}
    # An export made before a plain text block and its text were one message carries the older hashes.
    for row in sections.get("messages", []):
        if "agent_hash" in row:
            row["agent_hash"] = rehashed(row.get("body"), row["agent_hash"])
    return head, sections


async def import_memory(db: Database, *, tenant_id: str, memory_id: str, document: Any) -> dict[str, Any]:
    """Rebuild the memory; returns how many rows of each section it holds."""
    head, sections = _checked(document)

    async def write(session: StoreSession) -> dict[str, int]:
        if await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id) is not None:
            raise Conflict(f"memory {memory_id!r} already exists: import into a new id, or erase it first")
        done = await memory_import.rebuild_memory(session, tenant_id=tenant_id, memory_id=memory_id, head=head,
                                                  sections=sections)
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind=IMPORTED_EVENT,
                         payload={"rows": sum(done.counts.values())})
        return done.counts

    counts = await db.transact(write)
    return {"memory_id": memory_id, "imported": True, "rows": counts}
