"""The walk for the next message is prepared as soon as the reply is in, not when the lane reaches the reply's
event: with the lane held up behind a slow job (a bulk import, a slow judge), the next message still finds it
ready. A worker of this module's own, whose judge holds boundary scoring until the test lets it go."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from config.settings import Settings
from providers.factory import make_embedder
from providers.judge import BoundaryScores
from providers.local_judge import LocalJudge
from providers.usage import UsageScope
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.conftest import RECALL_CEILING
from tests.integration.recall.talk import Talk, auth
from tests.integration.workflows.lane_support import http_tenant, lane_idle, scalar
from tests.support import Serving, eventually, serving

EMBEDDER = make_embedder()
FACTS = [
    {"note": "The harbour depot gate code is 7731.", "subject": "harbour depot", "object": "gate code 7731"},
    {"note": "Omar runs the harbour depot night shift.", "subject": "Omar", "object": "harbour depot"},
    {"note": "The marketing offsite is in Lisbon.", "subject": "marketing offsite", "object": "Lisbon"},
]


class _HeldJudge(LocalJudge):
    """Boundary scoring (the first job of every decorate's event) waits while `free` is clear."""

    def __init__(self) -> None:
        super().__init__(EMBEDDER)
        self.free = asyncio.Event()
        self.free.set()
        self.waiting = 0

    async def score_boundaries(self, units: Sequence[str], *, scope: UsageScope | None = None
                               ) -> list[BoundaryScores]:
        self.waiting += 1
        try:
            await self.free.wait()
        finally:
            self.waiting -= 1
        return await super().score_boundaries(units, scope=scope)


@pytest.fixture
async def held() -> _HeldJudge:
    return _HeldJudge()


@pytest.fixture
async def ahead(settings: Settings, temporal_client: Client, held: _HeldJudge) -> AsyncIterator[Serving]:
    # A database of its own: the session's gateway relays every undelivered event of its database, and a memory
    # it started on its own task queue would run on a worker without the held judge.
    async with serving(settings, temporal_client, "lethe-ahead", judge=held, recall=True,
                       ceiling_tokens=RECALL_CEILING, recall_inline_deadline_ms=20_000) as running:
        yield running
        held.free.set()  # nothing left waiting when the worker shuts down


async def _walk_turns(http: httpx.AsyncClient, key: str, memory_id: str) -> list[int]:
    response = await http.get(f"/v1/memories/{memory_id}/export", headers=auth(key))
    assert response.status_code == 200, response.text
    return [w["for_turn"] for w in response.json()["recall_walks"]]


async def test_the_next_walk_is_ready_while_the_lane_is_still_behind(ahead: Serving, held: _HeldJudge) -> None:
    ahead_http, db = ahead.http, ahead.db
    tenant_id, key = await http_tenant(ahead_http)
    talk = Talk(ahead_http, key, "ahead")
    await talk.turn("Hello, let's plan the harbour depot visit.", "Sure.")
    await lane_idle(db, tenant_id)
    await write_note(db, tenant_id, "ahead", "notes-ahead", FACTS, datetime.now(UTC))
    await lane_idle(db, tenant_id)

    # The lane stops at turn 2's decorate (its boundary scoring is held), before the reply's event.
    held.free.clear()
    await talk.turn("What is the gate code at the harbour depot?", "It is 7731.")
    async def lane_held() -> bool:
        return held.waiting > 0

    await eventually(lane_held, timeout=60)

    async def walk_ready() -> bool:
        return 3 in await _walk_turns(ahead_http, key, "ahead")

    await eventually(walk_ready, timeout=60, every=0.3)
    # Still behind: the decorate's event and the reply's are both unprocessed.
    behind = await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL",
                          t=tenant_id)
    assert behind >= 2 and held.waiting > 0

    # Turn 3 finds the walk ready although the lane has not caught up.
    asked = await talk.turn("Where is the marketing offsite this year?", "Lisbon.")
    held.free.set()
    await lane_idle(db, tenant_id)
    blocks: list[dict[str, Any]] = (await ahead_http.get("/v1/memories/ahead", headers=auth(key))).json()[
        "recall_blocks"]
    assert {b["turn"]: b["provenance"] for b in blocks}.get(3) == "prepared", blocks
    assert any("Lisbon" in str(m.get("content")) for m in asked["request"]["messages"][:-1])
    # Turn 3's reply was walked from too, for turn 4.
    assert {3, 4} <= set(await _walk_turns(ahead_http, key, "ahead"))
