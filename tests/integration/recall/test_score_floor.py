"""A message that touches nothing in the memory gets no recall block, even where a walk was prepared and search
by meaning, as always, found neighbours; a message that does touch a fact still recalls it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from store.db import Database
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.talk import Talk, export_part, recall_blocks
from tests.integration.workflows.lane_support import lane_idle

PEOPLE = ["Priya", "Tomas", "Ines", "Kwame", "Yuki", "Oskar", "Leila", "Marek"]
THINGS = ["customs forms", "harbour depot lease", "forklift rota", "cold store audit", "tariff codes",
          "night shift handover", "crane inspection", "berth schedule"]


def _facts() -> list[dict[str, Any]]:
    return [{"note": f"{person} signs off the {thing}.", "subject": person, "object": thing}
            for person in PEOPLE for thing in THINGS[:4]]


async def _blocks(http: httpx.AsyncClient, key: str, memory_id: str) -> list[dict[str, Any]]:
    return await export_part(http, key, memory_id, "recall_blocks")


async def test_small_talk_recalls_nothing_and_a_question_recalls_its_fact(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    talk = Talk(recall_http, key, "untouched")
    await talk.turn("Hello! Today we plan the harbour paperwork.", "Happy to help.")
    await write_note(db, tenant_id, "untouched", "notes-untouched", _facts(), datetime.now(UTC))
    await lane_idle(db, tenant_id)
    await talk.turn("Lovely weather for a walk today.", "It is!")
    await lane_idle(db, tenant_id)  # the walk for the next message is prepared meanwhile

    for chatter in ("Thanks, that made my morning.", "Can you tell me a joke about cats?"):
        body = await talk.turn(chatter, "Sure.")
        assert recall_blocks(body["request"]) == [], chatter
        await lane_idle(db, tenant_id)
    assert await _blocks(recall_http, key, "untouched") == []

    body = await talk.turn("Who signs off the forklift rota?", "Let me check.")
    placed = recall_blocks(body["request"])
    assert placed and "forklift rota" in placed[0][1]
    assert [b["turn"] for b in await _blocks(recall_http, key, "untouched")] == [5]
