"""A message that touches nothing in the memory gets no recall block, even where a walk was prepared and search
by meaning, as always, found neighbours; a message that does touch a fact still recalls it.

The gateway here keeps what the walk's judge rates relevant, as a deployment does: the recall tests' own gateway
keeps `tangential` facts too, and a prepared walk's tangential facts are placed whatever the message (only the
message's own search hits must pass the floor)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from config.settings import Settings
from store.db import Database
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.talk import Talk, export_part, recall_blocks
from tests.integration.workflows.lane_support import lane_idle
from tests.support import free_port, serve_gateway

PEOPLE = ["Priya", "Tomas", "Ines", "Kwame", "Yuki", "Oskar", "Leila", "Marek"]
THINGS = ["customs forms", "harbour depot lease", "forklift rota", "cold store audit", "tariff codes",
          "night shift handover", "crane inspection", "berth schedule"]


VERBS = ["signs off", "drafts", "files", "checks", "books", "reviews", "archives", "prints"]


def _facts() -> list[dict[str, Any]]:
    # No two notes share a person and a verb, or a thing and a verb, so none is a new owner of another: notes
    # the judge retired in chains would leave which ones a walk meets to the vectors' last digits, which differ
    # between CPUs with and without AVX-512.
    return [{"note": f"{person} {VERBS[(p + t) % len(VERBS)]} the {thing}.", "subject": person, "object": thing}
            for p, person in enumerate(PEOPLE) for t, thing in enumerate(THINGS[:4])]


@pytest.fixture
async def floor_http(settings: Settings, worker: None) -> AsyncIterator[httpx.AsyncClient]:
    mine = settings.replace(recall=True, port=free_port(), recall_inline_deadline_ms=20_000)
    async with serve_gateway(mine) as url, httpx.AsyncClient(base_url=url, timeout=60) as client:
        yield client


async def _blocks(http: httpx.AsyncClient, key: str, memory_id: str) -> list[dict[str, Any]]:
    return await export_part(http, key, memory_id, "recall_blocks")


async def test_small_talk_recalls_nothing_and_a_question_recalls_its_fact(
    floor_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    talk = Talk(floor_http, key, "untouched")
    await talk.turn("Hello! Today we plan the harbour paperwork.", "Happy to help.")
    await write_note(db, tenant_id, "untouched", "notes-untouched", _facts(), datetime.now(UTC))
    await lane_idle(db, tenant_id)
    await talk.turn("Lovely weather for a walk today.", "It is!")
    await lane_idle(db, tenant_id)  # the walk for the next message is prepared meanwhile

    for chatter in ("Thanks, that made my morning.", "Can you tell me a joke about cats?"):
        body = await talk.turn(chatter, "Sure.")
        assert recall_blocks(body["request"]) == [], chatter
        await lane_idle(db, tenant_id)
    assert await _blocks(floor_http, key, "untouched") == []

    body = await talk.turn("Who signs off the forklift rota?", "Let me check.")
    placed = recall_blocks(body["request"])
    assert placed and "Leila signs off the forklift rota" in placed[0][1]
    assert [b["turn"] for b in await _blocks(floor_http, key, "untouched")] == [5]
