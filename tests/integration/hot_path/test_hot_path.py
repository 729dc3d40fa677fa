"""Decorate and report on real Postgres: idempotency, concurrency, sleep, erase, state and export."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import func, select, text

from config.settings import Settings
from engine.passages import PassageText
from store.db import Database
from store.models import Base, MessageRow
from store.repositories import memories
from store.repositories.search import insert_passages
from tests.integration.hot_path.conftest import SMALL_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import http_tenant
from tests.support import free_port, fresh_database, serve_gateway


def _auth(key: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **extra}


def _chat(*contents: str) -> dict[str, Any]:
    roles = ["user", "assistant"]
    return {"model": "gpt-4o-mini", "messages": [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]}


async def _count(db: Database, tenant_id: str) -> int:
    async with db.session() as session:
        return (await session.execute(
            select(func.count()).select_from(MessageRow).where(MessageRow.tenant_id == tenant_id))).scalar_one()


async def test_retried_decorate_and_report_answer_the_same_and_store_nothing_twice(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    body = _chat("What ships Friday?")
    first = await http.post("/v1/memories/retry/decorate", json=body, headers=_auth(key))
    again = await http.post("/v1/memories/retry/decorate", json=body, headers=_auth(key))
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()

    reply = {"choices": [{"message": {"role": "assistant", "content": "The pricing page."}}]}
    report = {"decorate_id": first.json()["decorate_id"], "response": reply}
    one = await http.post("/v1/memories/retry/report", json=report, headers=_auth(key, **{"Idempotency-Key": "r1"}))
    two = await http.post("/v1/memories/retry/report", json=report, headers=_auth(key, **{"Idempotency-Key": "r1"}))
    assert one.status_code == two.status_code == 200 and one.json() == two.json()
    assert await _count(db, tenant_id) == 2

    other = {"decorate_id": first.json()["decorate_id"], "response": {"choices": [
        {"message": {"role": "assistant", "content": "Something else."}}]}}
    clash = await http.post("/v1/memories/retry/report", json=other, headers=_auth(key, **{"Idempotency-Key": "r1"}))
    assert clash.status_code == 409 and clash.json()["error"]["type"] == "conflict"
    assert await _count(db, tenant_id) == 2


async def test_twenty_concurrent_decorates_lose_and_duplicate_nothing(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    bodies = [{"model": "m", "messages": [{"role": "user", "content": f"message {i}"}]} for i in range(20)]
    answers = await asyncio.gather(*[
        http.post("/v1/memories/busy/decorate", json=b, headers=_auth(key)) for b in bodies])
    assert [a.status_code for a in answers] == [200] * 20
    async with db.session() as session:
        rows = (await session.execute(select(MessageRow.seq, MessageRow.turn, MessageRow.body).where(
            MessageRow.tenant_id == tenant_id).order_by(MessageRow.seq))).all()
    assert [r.seq for r in rows] == list(range(1, 21))
    assert [r.turn for r in rows] == list(range(1, 21))
    assert sorted(r.body["content"] for r in rows) == sorted(b["messages"][0]["content"] for b in bodies)


async def test_user_message_after_25_hours_sleeps_before_the_reply(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    agent = ScriptedAgent(small_http, tenant[1], "sleeper", ScriptedModel("chat_completions"), SMALL_CEILING)
    # Enough history to sit above the landing, not enough to reach the budget: only sleep fades it.
    for turn in range(1, 36):
        await agent.turn(turn, headers={"X-Lethe-Now": f"2031-03-01T10:{turn:02d}:00Z"})
    assert not any(d["slept"] or d["note_ask_turns"] for d in agent.decorations)
    before = len(agent.decorations)
    await agent.turn(36, headers={"X-Lethe-Now": "2031-03-02T11:40:00Z"})  # 25 h after turn 35
    first_of_turn = agent.decorations[before]
    assert first_of_turn["slept"] and first_of_turn["note_ask_turns"]  # faded before the reply
    state = (await small_http.get("/v1/memories/sleeper", headers=_auth(tenant[1]))).json()
    assert any(e["state"] != "live" for e in state["episodes"])


async def test_erase_leaves_no_row_of_the_memory_in_any_table(
    small_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    agent = ScriptedAgent(small_http, key, "doomed", ScriptedModel("chat_completions"), SMALL_CEILING)
    for turn in range(1, 60):
        await agent.turn(turn)
    keep = ScriptedAgent(small_http, key, "kept", ScriptedModel("chat_completions"), SMALL_CEILING)
    await keep.turn(1)

    erased = await small_http.delete("/v1/memories/doomed", headers=_auth(key))
    assert erased.status_code == 200 and erased.json()["erased"]

    async with db.session() as session:
        memory_pk = (await session.execute(text(
            "SELECT id FROM memories WHERE tenant_id = :t AND memory_id = 'kept'"), {"t": tenant_id})).scalar_one()
        for table in Base.metadata.tables.values():  # counted, not created: no order needed
            columns = table.c.keys()
            if "memory_pk" in columns:
                where = (table.c.tenant_id == tenant_id) & (table.c.memory_pk != memory_pk)
            elif "memory_id" in columns and table.name != "memories":
                where = (table.c.tenant_id == tenant_id) & (table.c.memory_id == "doomed")
            elif table.name == "memories":
                where = (table.c.tenant_id == tenant_id) & (table.c.memory_id == "doomed")
            else:
                continue
            left = (await session.execute(select(func.count()).select_from(table).where(where))).scalar_one()
            assert left == 0, f"{table.name} still holds {left} rows of the erased memory"
    assert (await small_http.get("/v1/memories/doomed", headers=_auth(key))).status_code == 404
    assert (await small_http.get("/v1/memories/kept", headers=_auth(key))).json()["messages"] >= 2


async def test_state_shows_activation_and_significance_and_export_streams_everything(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    agent = ScriptedAgent(small_http, tenant[1], "shown", ScriptedModel("chat_completions"), SMALL_CEILING)
    for turn in range(1, 70):
        await agent.turn(turn, headers={"X-Lethe-Now": f"2032-01-01T{turn // 60:02d}:{turn % 60:02d}:00Z"})
    state = (await small_http.get("/v1/memories/shown", headers=_auth(tenant[1], **{
        "X-Lethe-Now": "2032-01-01T02:00:00Z"}))).json()
    assert state["episodes"]
    for episode in state["episodes"]:
        # The encoding trace, never faded: 1, or the episode's salience once the lane has judged its act.
        encoding = 1.0 if episode["salience"] is None else episode["salience"]
        assert episode["significance"] >= encoding and (episode["act"] is None) == (episode["salience"] is None)
        assert 0 < episode["activation"] <= episode["significance"]
    exported = await small_http.get("/v1/memories/shown/export", headers=_auth(tenant[1]))
    assert exported.headers["content-type"].startswith("application/json")
    document = json.loads(exported.text)
    assert set(document) >= {"memory", "messages", "episodes", "episode_transitions", "traces", "facts",
                              "note_calls", "decorations", "tone_baselines"}
    assert all({"act", "intensity", "salience"} <= set(e) for e in document["episodes"])
    assert len(document["messages"]) == state["messages"]
    # Erased, which ends its workflow: the shared worker does not spend the next tests on this memory's lane.
    assert (await small_http.delete("/v1/memories/shown", headers=_auth(tenant[1]))).json()["erased"]


async def test_report_hands_back_the_reply_without_the_note_call(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    model = ScriptedModel("chat_completions", note_only_every=1)
    agent = ScriptedAgent(small_http, tenant[1], "quiet", model, SMALL_CEILING)
    turn = await agent.until_asked()
    # The agent's transcript holds no note call, yet every later request stays valid (checked in turn()).
    assert not any("note" in json.dumps(m.get("tool_calls") or "") for m in agent.transcript)
    await agent.turn(turn + 1)


async def test_with_the_lane_down_the_hot_path_still_keeps_every_request_within_the_ceiling(
    settings: Settings,
) -> None:
    # A deployment whose lane never runs (no worker polls its task queue, and its database is its own, so no
    # other gateway's relay delivers its events either): no boundary score is ever written.
    alone = settings.replace(
        ceiling_tokens=SMALL_CEILING, port=free_port(), temporal_task_queue="nobody-listens",
        database_url=await fresh_database(settings.database.url))
    async with serve_gateway(alone) as url, httpx.AsyncClient(base_url=url, timeout=60) as client:
        tenant_id, key = await http_tenant(client)
        agent = ScriptedAgent(client, key, "unscored", ScriptedModel("chat_completions"), SMALL_CEILING)
        await agent.until_asked()  # each decorate is checked against the ceiling in turn()
    own = Database(alone.database.url, pool_size=1)
    async with own.session() as session:
        episodes = (await session.execute(text(
            "SELECT count(*) FROM episodes WHERE tenant_id = :t"), {"t": tenant_id})).scalar_one()
        scores = (await session.execute(text("SELECT count(*) FROM boundary_scores"))).scalar_one()
        lane_ran = (await session.execute(text(
            "SELECT count(*) FROM outbox WHERE processed_at IS NOT NULL"))).scalar_one()
    await own.dispose()
    # The hot path never scores: with nothing judged, it cut by sizes alone, and only once the ceiling was near.
    assert lane_ran == 0 and scores == 0 and episodes > 0


async def test_a_delta_that_repeats_an_earlier_user_message_is_a_new_turn(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    for text_sent in ("continue", "and the refunds?", "continue"):  # an agent sending only what is new
        decorated = await http.post("/v1/memories/again/decorate", headers=_auth(key), json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": text_sent}]})
        assert decorated.status_code == 200
        reply = {"choices": [{"message": {"role": "assistant", "content": f"on it: {text_sent}"}}]}
        reported = await http.post("/v1/memories/again/report", headers=_auth(key), json={
            "decorate_id": decorated.json()["decorate_id"], "response": reply})
        assert reported.status_code == 200
    sent = [m["content"] for m in decorated.json()["request"]["messages"] if m["role"] == "user"]
    assert sent == ["continue", "and the refunds?", "continue"]
    async with db.session() as session:
        turns = (await session.execute(select(MessageRow.turn).where(
            MessageRow.tenant_id == tenant_id, MessageRow.role == "user").order_by(MessageRow.seq))).scalars().all()
    assert turns == [1, 2, 3]


async def test_a_resend_made_before_the_reply_was_appended_adds_nothing(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    first = await http.post("/v1/memories/resend/decorate", headers=_auth(key), json=_chat("What ships Friday?"))
    await http.post("/v1/memories/resend/report", headers=_auth(key), json={
        "decorate_id": first.json()["decorate_id"],
        "response": {"choices": [{"message": {"role": "assistant", "content": "The pricing page."}}]}})
    # The agent's model call failed after report; it decorates its unchanged history again.
    again = await http.post("/v1/memories/resend/decorate", headers=_auth(key, **{"Idempotency-Key": "second"}),
                            json=_chat("What ships Friday?"))
    assert again.status_code == 200
    assert [m["content"] for m in again.json()["request"]["messages"]] == ["What ships Friday?", "The pricing page."]
    assert await _count(db, tenant_id) == 2


async def test_a_decorate_kept_waiting_by_the_memory_lock_says_so_in_the_log(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    tenant_id, key = tenant
    assert (await http.post("/v1/memories/held/decorate", json=_chat("Who owns the tax table?"),
                            headers=_auth(key))).status_code == 200
    held = asyncio.Event()

    async def hold_the_lock() -> None:  # as a lane write does until its transaction commits
        async with db.session() as session, session.begin():
            await memories.lock_memory(session, tenant_id=tenant_id, memory_id="held", create=False)
            held.set()
            await asyncio.sleep(0.8)

    holder = asyncio.create_task(hold_the_lock())
    await held.wait()
    with caplog.at_level(logging.WARNING, logger="service.decorate"):
        answer = await http.post("/v1/memories/held/decorate", json=_chat("Who owns the tax table?", "Dana.",
                                                                         "And the refund line?"), headers=_auth(key))
    await holder
    assert answer.status_code == 200
    slow = [r for r in caplog.records if r.getMessage().startswith("slow decorate of held")]
    assert len(slow) == 1, caplog.text
    assert slow[0].lock_wait_ms >= 600 and slow[0].total_ms >= slow[0].lock_wait_ms  # type: ignore[attr-defined]


async def test_a_decorate_does_not_wait_for_a_lane_write_that_only_adds_to_the_memory(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """A lane transaction adding a passage holds a key-share lock on the memory's row until it commits (its
    foreign key): the decorate's lock is one that share does not block, so the agent never waits for it."""
    tenant_id, key = tenant
    assert (await http.post("/v1/memories/indexing/decorate", json=_chat("Who owns the tax table?"),
                            headers=_auth(key))).status_code == 200
    adding, added = asyncio.Event(), asyncio.Event()

    async def add_a_passage() -> None:  # as the lane's indexing does, its transaction open a while
        async with db.session() as session, session.begin():
            memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id="indexing")
            await insert_passages(session, tenant_id=tenant_id, memory_pk=memory.id, episode_key="e1",
                                  passages=[PassageText(0, 1, 2, 1, 1, "Dana owns the tax table.")],
                                  vectors=np.ones((1, 384), dtype=np.float32) / np.sqrt(384),
                                  at=memory.created_at, language="simple")
            adding.set()
            await asyncio.sleep(1.0)
        added.set()

    adder = asyncio.create_task(add_a_passage())
    await adding.wait()
    with caplog.at_level(logging.WARNING, logger="service.decorate"):
        answer = await http.post("/v1/memories/indexing/decorate", json=_chat(
            "Who owns the tax table?", "Dana.", "And the refund line?"), headers=_auth(key))
    answered_before_the_commit = not added.is_set()
    await adder
    assert answer.status_code == 200
    assert answered_before_the_commit
    assert not [r for r in caplog.records if r.getMessage().startswith("slow decorate of indexing")], caplog.text
