"""A memory whose note ask goes unanswered is found with `LetheNoteAskPending = true` (docs/operating.md's filter);
answering clears it. Against the session's gateway, worker and Temporal dev server.

The leaving episode and its ask are written here as the hot path writes them (episodes.asked_at, asks), so the
test holds whichever way decorate comes to ask; each step then goes through decorate over HTTP.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import text
from temporalio.client import Client

from store.db import Database
from tests.integration.workflows.lane_support import http_tenant, unprocessed
from tests.integration.workflows.recorded import record_histories
from tests.support import eventually
from workflows.memory import MemoryWorkflow, workflow_id

STUCK = 'LetheNoteAskPending = true AND LetheNoteAskSince < "{before}" AND LetheTenant = "{tenant}"'


async def _decorate(http: httpx.AsyncClient, key: str, content: str) -> None:
    response = await http.post("/v1/memories/stuck/decorate", headers={"Authorization": f"Bearer {key}"},
                               json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]})
    assert response.status_code == 200, response.text


async def _set_ask(db: Database, tenant_id: str, *, asked_at: datetime | None, asks: int) -> None:
    async with db.session() as session, session.begin():
        await session.execute(text(
            "INSERT INTO episodes (memory_pk, tenant_id, episode_key, state, first_seq, last_seq, first_turn, "
            "last_turn, tokens, at, facts_written, sealed_without_facts, asks) "
            "SELECT id, tenant_id, 'ep-1-1', 'leaving', 1, 1, 1, 1, 10, now(), false, false, 0 FROM memories "
            "WHERE tenant_id = :t ON CONFLICT DO NOTHING"), {"t": tenant_id})
        await session.execute(text("UPDATE episodes SET asked_at = :at, asks = :asks, facts_written = :done "
                                   "WHERE tenant_id = :t"),
                              {"t": tenant_id, "at": asked_at, "asks": asks, "done": asked_at is None})


async def _listed(client: Client, query: str) -> list[str]:
    return [w.id async for w in client.list_workflows(query)]


async def test_unanswered_note_ask_is_found_by_the_filter_and_cleared_when_answered(
    http: httpx.AsyncClient, db: Database, temporal_client: Client
) -> None:
    tenant_id, key = await http_tenant(http)
    await _decorate(http, key, "Export the pricing table for finance.")
    asked_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    await _set_ask(db, tenant_id, asked_at=asked_at, asks=3)  # asked on three calls, none answered
    await _decorate(http, key, "Any news from legal?")

    stuck = STUCK.format(before=(asked_at + timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
                         tenant=tenant_id)
    assert await eventually(lambda: _listed(temporal_client, stuck)) == [workflow_id(tenant_id, "stuck")]
    handle = temporal_client.get_workflow_handle(workflow_id(tenant_id, "stuck"))
    state = await handle.query(MemoryWorkflow.lane)
    # Three asks, plus the one the hot path adds if this decorate asked again.
    assert state.status is not None and state.status.note_asks >= 3
    assert state.status.note_ask_since == asked_at

    await _set_ask(db, tenant_id, asked_at=None, asks=0)  # the note was taken
    await _decorate(http, key, "Thanks, next topic.")
    await eventually(lambda: _none_pending(db, temporal_client, tenant_id))
    assert await _listed(temporal_client, stuck) == []
    await record_histories(temporal_client, [await handle.describe()], "note_ask")


async def _none_pending(db: Database, client: Client, tenant_id: str) -> bool:
    if await unprocessed(db, tenant_id):
        return False
    query = f'LetheNoteAskPending = false AND LetheTenant = "{tenant_id}"'
    return await _listed(client, query) == [workflow_id(tenant_id, "stuck")]
