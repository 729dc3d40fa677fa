"""A gateway for the inspector's tests (small ceiling, a Temporal UI address) and one memory grown through it.

The memory is grown once per session, a turn every three minutes (X-Lethe-Now) until a fade has asked for a
note and the answered episodes have sealed, then a day of silence and a turn that sleeps: the API tests and the
browser tests look at the same memory, with several episode states, a fade and a sleep.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from config.settings import Settings
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.support import free_port, serve_gateway

SMALL_CEILING = 4000
TEMPORAL_UI = "http://127.0.0.1:9/temporal-ui"


@dataclass(frozen=True)
class Grown:
    url: str
    tenant_id: str
    key: str
    memory_id: str
    other_key: str
    # A memory of the same tenant whose model ignores the note ask: it stays pending.
    pending_id: str


async def _tenant(http: httpx.AsyncClient, prefix: str) -> tuple[str, str]:
    response = await http.post("/v1/admin/tenants", json={"name": f"{prefix}-{uuid.uuid4().hex}"},
                               headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 201, response.text
    return response.json()["tenant_id"], response.json()["api_key"]


@pytest.fixture(scope="session")
async def inspect_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    # Recall on (the session's settings turn it off): the page's recall panel shows the grown memory's blocks.
    small = settings.replace(recall=True, ceiling_tokens=SMALL_CEILING, port=free_port(),
                             temporal_ui_url=TEMPORAL_UI)
    async with serve_gateway(small) as url:
        yield url


async def _converse(agent: ScriptedAgent, *, sleep: bool) -> None:
    """A turn every three minutes until a note ask; then, if `sleep`, the turns that seal it and a day of silence."""
    at = datetime.now(UTC) - timedelta(hours=30)

    async def turn(number: int, after: timedelta) -> None:
        nonlocal at
        at += after
        await agent.turn(number, headers={"X-Lethe-Now": at.isoformat()})

    number = 0
    while not any(d["note_ask_turns"] for d in agent.decorations):
        number += 1
        assert number <= 200, "never asked for a note"
        await turn(number, timedelta(minutes=3))
    if not sleep:
        return
    for _ in range(2):  # the answered note seals once its last turn is over
        number += 1
        await turn(number, timedelta(minutes=3))
    await turn(number + 1, timedelta(hours=25))  # a day of silence: this turn sleeps
    for extra in range(2, 4):  # and what it asked about seals
        await turn(number + extra, timedelta(minutes=3))


@pytest.fixture(scope="session")
async def grown(inspect_gateway: str) -> Grown:
    """A memory that has faded and slept (live, sealed and forgotten episodes), and one whose note ask waits."""
    async with httpx.AsyncClient(base_url=inspect_gateway, timeout=60) as http:
        tenant_id, key = await _tenant(http, "inspect")
        _, other_key = await _tenant(http, "inspect-other")
        suffix = uuid.uuid4().hex[:6]
        agent = ScriptedAgent(http, key, f"inspected-{suffix}", ScriptedModel("chat_completions"), SMALL_CEILING)
        ignoring = ScriptedAgent(http, key, f"pending-{suffix}", ScriptedModel("chat_completions", answers_notes=False),
                                 SMALL_CEILING)
        await asyncio.gather(_converse(agent, sleep=True), _converse(ignoring, sleep=False))
    return Grown(inspect_gateway, tenant_id, key, agent.memory_id, other_key, ignoring.memory_id)


@pytest.fixture
async def inspect_http(inspect_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=inspect_gateway, timeout=60) as client:
        yield client
