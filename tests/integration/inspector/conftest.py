"""A gateway for the inspector's tests (small ceiling, a Temporal UI address) and one memory grown through it.

The memory is grown once per session, a turn every three minutes (X-Lethe-Now) until a fade has asked for a
note and the answered episodes have sealed, then a day of silence and a turn that sleeps, and the lane left to
finish: the API tests and the browser tests look at the same memory, with several episode states, a fade and a
sleep.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from config.settings import Settings
from store.db import Database
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import lane_idle
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


class _Conversation:
    """One agent's turns at a clock of its own (X-Lethe-Now), starting 30 hours ago, three minutes apart."""

    def __init__(self, agent: ScriptedAgent) -> None:
        self.agent = agent
        self.number = 0
        self.at = datetime.now(UTC) - timedelta(hours=30)

    async def turn(self, after: timedelta = timedelta(minutes=3)) -> None:
        self.number += 1
        self.at += after
        assert self.number <= 200, "the memory never reached the states the inspector's tests look at"
        await self.agent.turn(self.number, headers={"X-Lethe-Now": self.at.isoformat()})

    async def until_asked(self) -> None:
        while not any(d["note_ask_turns"] for d in self.agent.decorations):
            await self.turn()

    async def faded_and_slept(self) -> None:
        """Past a note ask, the turns that seal it, a day of silence (its turn sleeps), and two turns more."""
        await self.until_asked()
        for _ in range(2):  # the answered note seals once its last turn is over
            await self.turn()
        await self.turn(timedelta(hours=25))  # a day of silence: this turn sleeps
        for _ in range(2):  # and what it asked about seals
            await self.turn()


def _varied(memory: dict[str, Any]) -> bool:
    """Several episode states to show, and an episode that left with the facts written for it."""
    episodes = memory["episodes"]
    return len({e["state"] for e in episodes}) >= 2 and any(
        e["state"] in ("sealed", "leaving") and e["facts_written"] for e in episodes)


async def _settled(http: httpx.AsyncClient, db: Database, conversation: _Conversation, tenant_id: str,
                   key: str) -> None:
    """Once the lane is done with the memory, it still shows several states, or it talks on until it does.

    How far the lane has cut and faded when the last turn is in depends on the machine's load: a busy one can
    leave every episode cut so far forgotten. The tests then see a state that no later work changes."""
    while True:
        await lane_idle(db, tenant_id)
        response = await http.get(f"/v1/memories/{conversation.agent.memory_id}",
                                  headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200, response.text
        if _varied(response.json()):
            return
        await conversation.turn()


@pytest.fixture(scope="session")
async def grown(inspect_gateway: str, db: Database) -> Grown:
    """A memory that has faded and slept (live, sealed and forgotten episodes), and one whose note ask waits."""
    async with httpx.AsyncClient(base_url=inspect_gateway, timeout=60) as http:
        tenant_id, key = await _tenant(http, "inspect")
        _, other_key = await _tenant(http, "inspect-other")
        suffix = uuid.uuid4().hex[:6]
        agent = _Conversation(ScriptedAgent(http, key, f"inspected-{suffix}", ScriptedModel("chat_completions"),
                                            SMALL_CEILING))
        ignoring = _Conversation(ScriptedAgent(http, key, f"pending-{suffix}",
                                               ScriptedModel("chat_completions", answers_notes=False), SMALL_CEILING))
        await asyncio.gather(agent.faded_and_slept(), ignoring.until_asked())
        await _settled(http, db, agent, tenant_id, key)
    return Grown(inspect_gateway, tenant_id, key, agent.agent.memory_id, other_key, ignoring.agent.memory_id)


@pytest.fixture
async def inspect_http(inspect_gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=inspect_gateway, timeout=60) as client:
        yield client
