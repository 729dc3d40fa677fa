"""The idle gate with an extraction model (issue #37): the OpenAI-compatible judge reads the quiet turns for facts,
each with whose word it rests on; those the tenant's profile lets in join the user's graph (with the conversation
they came from) for its lane, once however often the gate runs. With the embedded judge, passages only."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text, update
from temporalio.testing import ActivityEnvironment

from activities.idle import IdleActivities
from cli.worker import build_embedder
from config.settings import Settings
from contracts.lane_types import IdleInput, MemoryRef
from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from store.db import Database
from store.models import MemoryRow
from store.repositories import users
from tests.integration.providers.openai_fake import serve_fake_openai
from tests.integration.workflows.lane_support import add_turn, new_tenant

AT = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
SAID = "I moved my dentist appointment to Friday the 9th, and my sister Carla is visiting in June."


def _extractor(body: dict[str, Any]) -> str:
    """A stand-in extraction model: the user's move (their word), and a guess the assistant made."""
    task = body.get("response_format", {}).get("json_schema", {}).get("name")
    assert task == "extract_facts", task
    stretches = re.findall(r"^Stretch (\d+): ", body["messages"][-1]["content"], flags=re.MULTILINE)
    facts = [{"note": "The user's dentist appointment is on Friday the 9th.", "subject": "dentist appointment",
              "object": "Friday the 9th", "source": "user"},
             {"note": "The user probably prefers morning appointments.", "subject": "the user",
              "object": "morning appointments", "source": "assistant"}]
    return json.dumps({"items": [{"i": int(i), "facts": facts if i == "0" else []} for i in stretches]})


async def _conversation(db: Database, tenant_id: str, memory_id: str, user_id: str) -> int:
    """A short conversation of the user; returns the user's graph memory pk."""
    await add_turn(db, tenant_id, memory_id, at=AT, user=SAID, reply="Noted: Friday the 9th. Mornings suit you?")
    async with db.session() as session, session.begin():
        link = await users.ensure_user(session, tenant_id=tenant_id, user_id=user_id)
        await session.execute(update(MemoryRow).where(MemoryRow.tenant_id == tenant_id,
                                                      MemoryRow.memory_id == memory_id).values(user_pk=link.user_pk))
        return link.graph_memory_pk


async def _graph(db: Database, graph_pk: int) -> tuple[list[tuple[str, str, str | None]], int, int]:
    """The graph's facts (note, source, origin conversation), its passages, and its `fed` events."""
    async with db.session() as session:
        facts = [tuple(r) for r in await session.execute(text(
            "SELECT note, source, origin_memory_id FROM facts WHERE memory_pk = :g ORDER BY id"), {"g": graph_pk})]
        passages = (await session.execute(text("SELECT count(*) FROM passages WHERE memory_pk = :g"),
                                          {"g": graph_pk})).scalar_one()
        fed = (await session.execute(text("SELECT count(*) FROM outbox WHERE memory_pk = :g AND kind = 'fed'"),
                                     {"g": graph_pk})).scalar_one()
    return facts, int(passages), int(fed)  # type: ignore[return-value]


async def test_an_extraction_model_notes_the_users_word_into_their_graph_once(
    settings: Settings, db: Database,
) -> None:
    tenant_id = await new_tenant(db)
    graph_pk = await _conversation(db, tenant_id, "quiet-a", "dana")
    embedder = build_embedder(settings.models)
    with serve_fake_openai() as fake:
        fake.answer = _extractor
        judge = OpenAIJudge(base_url=fake.base_url, api_key="test", model="stand-in",
                            fallback=LocalJudge(embedder))
        gate = IdleActivities(db, embedder, judge=judge)
        quiet = IdleInput(MemoryRef(tenant_id, "quiet-a"), AT)
        assert await ActivityEnvironment().run(gate.index_quiet_turns, quiet) == 1
        again = await ActivityEnvironment().run(gate.index_quiet_turns, quiet)
    assert again == 0 and judge.fallbacks == 0
    facts, passages, fed = await _graph(db, graph_pk)
    # The user's word under the default profile; the assistant's guess stays out.
    assert facts == [("The user's dentist appointment is on Friday the 9th.", "user", "quiet-a")]
    assert passages == 1 and fed == 1


async def test_with_the_embedded_judge_a_quiet_conversation_leaves_passages_only(
    settings: Settings, db: Database,
) -> None:
    tenant_id = await new_tenant(db)
    graph_pk = await _conversation(db, tenant_id, "quiet-b", "eli")
    embedder = build_embedder(settings.models)
    gate = IdleActivities(db, embedder, judge=LocalJudge(embedder))
    assert await ActivityEnvironment().run(gate.index_quiet_turns, IdleInput(MemoryRef(tenant_id, "quiet-b"), AT)) == 1
    assert await _graph(db, graph_pk) == ([], 1, 0)
