"""One cutting path: the hot path and the lane cut the same history into the same episodes; the size ratio
is kept per tenant and model; a turn larger than the ceiling is refused, naming the limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import select, update

from activities.history import cut_uncut, score_units
from config.mechanism import mechanism_config
from config.settings import Settings
from providers.factory import make_embedder, make_judge
from store.db import Database
from store.models import EpisodeRow, MemoryRow
from tests.integration.hot_path.conftest import SMALL_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import http_tenant
from tests.support import free_port, fresh_database, serve_gateway

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# Long instructions: what no fade can shrink is a large part of the budget, so a cut planned without them
# would pick a different episode maximum.
INSTRUCTIONS = "You run launches for the pricing team and keep every ticket number exact. " * 400
TOPICS = ["pricing table", "refund line", "tax rates", "launch checklist", "legal review", "support macros"]


def _user(turn: int) -> dict[str, Any]:
    topic = TOPICS[(turn // 2) % len(TOPICS)]
    return {"role": "user", "content": f"Turn {turn}: what is left on the {topic}? " + f"Details on {topic}. " * 40}


def _reply(turn: int) -> dict[str, Any]:
    topic = TOPICS[(turn // 2) % len(TOPICS)]
    return {"role": "assistant", "content": f"On the {topic}, turn {turn}: " + f"The {topic} is on track. " * 60}


async def _converse(http: httpx.AsyncClient, key: str, memory_id: str, turns: int, *, at: datetime) -> None:
    transcript: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        transcript.append(_user(turn))
        headers = {"Authorization": f"Bearer {key}", "X-Lethe-Now": (at + timedelta(minutes=turn)).isoformat()}
        decorated = await http.post(f"/v1/memories/{memory_id}/decorate", headers=headers, json={
            "model": "gpt-4o-mini", "messages": [{"role": "system", "content": INSTRUCTIONS}, *transcript]})
        assert decorated.status_code == 200, decorated.text
        if turn == turns:
            return
        transcript.append(_reply(turn))
        reported = await http.post(f"/v1/memories/{memory_id}/report", headers=headers, json={
            "decorate_id": decorated.json()["decorate_id"],
            "response": {"choices": [{"index": 0, "message": transcript[-1], "finish_reason": "stop"}]}})
        assert reported.status_code == 200, reported.text


async def _episodes(db: Database, tenant_id: str, memory_id: str) -> list[tuple[int, int]]:
    async with db.session() as session:
        rows = await session.execute(
            select(EpisodeRow.first_seq, EpisodeRow.last_seq).join(MemoryRow, MemoryRow.id == EpisodeRow.memory_pk)
            .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id).order_by(EpisodeRow.first_seq))
        return [(first, last) for first, last in rows]


async def test_the_hot_path_and_the_lane_cut_the_same_history_into_the_same_episodes(settings: Settings) -> None:
    # A deployment whose lane never runs by itself: this test runs the lane's scoring and cutting in order.
    alone = settings.replace(
        ceiling_tokens=40_000, port=free_port(), temporal_task_queue="nobody-listens",
        database_url=await fresh_database(settings.database.url))
    db = Database(alone.database.url, pool_size=2)
    judge = make_judge(kind="local", embedder=make_embedder(kind="local"))
    try:
        async with serve_gateway(alone) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            tenant_id, key = await http_tenant(http)
            for memory_id in ("by-hot-path", "by-lane"):
                await _converse(http, key, memory_id, 14, at=T0)
                # The lane judges every closed unit, with the memory's one judge.
                assert await score_units(db, judge, tenant_id=tenant_id, memory_id=memory_id) > 0
            cut = await cut_uncut(db, mechanism_config(alone), tenant_id=tenant_id, memory_id="by-lane")
            assert cut.episodes > 1
            assert await _episodes(db, tenant_id, "by-hot-path") == []
            # 25 hours later a new user message sleeps: the hot path cuts the same history itself.
            later = T0 + timedelta(hours=25)
            await _converse(http, key, "by-hot-path", 15, at=later - timedelta(minutes=15))
            hot = await _episodes(db, tenant_id, "by-hot-path")
        assert hot and hot == await _episodes(db, tenant_id, "by-lane")
    finally:
        await db.dispose()


async def test_a_new_memory_starts_with_its_tenants_size_ratio_for_the_model(small_http: httpx.AsyncClient) -> None:
    _, key = await http_tenant(small_http)
    auth = {"Authorization": f"Bearer {key}"}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "How far along is the launch?"}]}
    first = (await small_http.post("/v1/memories/first/decorate", headers=auth, json=body)).json()
    assert first["budget"]["ceiling"] == SMALL_CEILING
    # The provider counts half as many tokens again as Lethe's estimate of the request it was sent.
    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Nearly done."},
                          "finish_reason": "stop"}],
             "usage": {"prompt_tokens": round(first["estimated_tokens"] * 1.5), "completion_tokens": 3}}
    reported = await small_http.post("/v1/memories/first/report", headers=auth,
                                     json={"decorate_id": first["decorate_id"], "response": reply})
    assert reported.status_code == 200, reported.text
    fresh = (await small_http.post("/v1/memories/second/decorate", headers=auth, json=body)).json()
    ratio = round(first["estimated_tokens"] * 1.5) / first["estimated_tokens"]
    assert fresh["budget"]["ceiling"] == int(SMALL_CEILING / ratio)


async def test_a_user_message_larger_than_the_ceiling_is_refused_with_413_naming_it(
    small_http: httpx.AsyncClient,
) -> None:
    _, key = await http_tenant(small_http)
    auth = {"Authorization": f"Bearer {key}"}
    huge = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Summarise this log: " + "ab " * 20_000}]}
    refused = await small_http.post("/v1/memories/huge/decorate", headers=auth, json=huge)
    assert refused.status_code == 413, refused.text
    error = refused.json()["error"]
    assert error["type"] == "over_ceiling" and error["field"] == "messages" and error["ceiling"] == SMALL_CEILING
    assert str(SMALL_CEILING) in error["message"] and error["tokens"] > SMALL_CEILING
    # Nothing was stored: the memory does not exist.
    assert (await small_http.get("/v1/memories/huge", headers=auth)).status_code == 404


async def test_an_owed_sleep_happens_at_the_next_call_and_only_once(
    small_http: httpx.AsyncClient, db: Database
) -> None:
    # The engine decides when a sleep is owed (tests/unit/engine/test_decorate.py); this checks the gateway
    # keeps that debt on the memory and pays it once.
    tenant_id, key = await http_tenant(small_http)
    agent = ScriptedAgent(small_http, key, "owed", ScriptedModel("chat_completions"), SMALL_CEILING)
    for turn in range(1, 4):
        await agent.turn(turn)
    assert not any(d["slept"] for d in agent.decorations)
    async with db.session() as session, session.begin():
        await session.execute(update(MemoryRow).where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == "owed")
                              .values(sleep_owed=True))
    first = len(agent.decorations)
    await agent.turn(4)
    await agent.turn(5)
    slept = [d["slept"] for d in agent.decorations[first:]]
    assert slept[0] and slept.count(True) == 1, slept
    async with db.session() as session:
        owed = (await session.execute(select(MemoryRow.sleep_owed).where(
            MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == "owed"))).scalar_one()
    assert owed is False
