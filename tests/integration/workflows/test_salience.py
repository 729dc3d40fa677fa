"""Salience on the real stack: the lane judges a correction and a routine lookup with each judge (the embedded
one, and an OpenAI-compatible one over real HTTP), stores their acts and salience, and the lookup's activation
falls below the correction's though it is the newer; with salience off the lane judges nothing and activations
are what they were.

A deployment of this module's own (its own database and task queue), so no other gateway's relay runs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from temporalio.client import Client

from cli.worker import build_embedder, build_worker
from config.settings import Settings
from engine.episodes import Episode, EpisodeState
from engine.salience import ACT_FLOORS, Act
from providers.judge import Judge
from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from service.memory_state import memory_state
from store.db import Database
from store.repositories import episode_store, memories
from tests.integration.providers.openai_fake import serve_fake_openai
from tests.integration.workflows.lane_support import add_turn, new_tenant, unprocessed
from tests.integration.workflows.lane_support import signal as signal_lane
from tests.support import eventually, own_deployment

T0 = datetime(2031, 6, 2, 9, 0, tzinfo=UTC)
TURNS = [
    ("When is the design review?", "The design review is on Wednesday at 10."),
    # The correction: the user sets straight what the assistant held.
    ("No, that's wrong: the design review moved to Thursday.", "Noted: the design review is on Thursday."),
    # The routine lookup, a minute later.
    ("What's the status of ticket LTH-1042?", "LTH-1042 is in review."),
    ("ok", None),
]
CORRECTION, LOOKUP = "ep-3-4", "ep-5-6"


@pytest.fixture(scope="module")
async def own(settings: Settings) -> AsyncIterator[tuple[Settings, Database]]:
    async with own_deployment(settings, "salience") as deployment:
        yield deployment


async def _converse(db: Database, tenant_id: str, memory_id: str) -> int:
    """The turns as decorate and report store them, and the two episodes a fade's cut would save; returns the
    newest event's number."""
    seq = 0
    for n, (user, reply) in enumerate(TURNS):
        seq = await add_turn(db, tenant_id, memory_id, at=T0 + timedelta(minutes=n), user=user, reply=reply)
    cut = [Episode(id=key, state=EpisodeState.LIVE, first_seq=first, last_seq=first + 1, first_turn=turn,
                   last_turn=turn, tokens=30, at=T0 + timedelta(minutes=turn - 1))
           for key, first, turn in ((CORRECTION, 3, 2), (LOOKUP, 5, 3))]
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        await episode_store.save_cut(session, tenant_id=tenant_id, memory_pk=memory.id, episodes=cut, at=T0)
    return seq


async def _run_lane(settings: Settings, db: Database, client: Client, judge: Judge, tenant_id: str,
                    memory_id: str) -> None:
    seq = await _converse(db, tenant_id, memory_id)
    async with build_worker(client, db, task_queue=settings.temporal.task_queue, settings=settings, judge=judge):
        await signal_lane(client, tenant_id, memory_id, seq, settings.temporal.task_queue)
        await eventually(lambda: _done(db, tenant_id), timeout=90)


async def _done(db: Database, tenant_id: str) -> bool:
    return await unprocessed(db, tenant_id) == 0


async def _judged(db: Database, tenant_id: str) -> dict[str, tuple[str | None, float | None]]:
    async with db.session() as session:
        rows = await session.execute(text(
            "SELECT episode_key, act, salience FROM episodes WHERE tenant_id = :t"), {"t": tenant_id})
        return {key: (act, salience) for key, act, salience in rows}


async def _activations(db: Database, tenant_id: str, memory_id: str, *, salience: bool) -> dict[str, float]:
    state = await memory_state(db, tenant_id=tenant_id, memory_id=memory_id, now=T0 + timedelta(hours=2),
                               salience=salience)
    return {e["id"]: e["activation"] for e in state["episodes"]}


def _stand_in_model(body: dict[str, Any]) -> str:
    """A stand-in chat model: boundaries flat, acts from the episode's words; anything else gets junk."""
    task = body.get("response_format", {}).get("json_schema", {}).get("name")
    prompt = body["messages"][-1]["content"]
    if task == "score_boundaries":
        units = re.findall(r"^Unit (\d+): ", prompt, flags=re.MULTILINE)
        return json.dumps({"items": [{"i": int(i), "start": 0.5, "end": 0.5} for i in units]})
    if task == "judge_acts":
        episodes = re.split(r"^Episode (\d+): ", prompt, flags=re.MULTILINE)[1:]
        answers = [{"i": int(i), "act": "correction" if "that's wrong" in said else "lookup", "score": 0.9}
                   for i, said in zip(episodes[0::2], episodes[1::2], strict=True)]
        return json.dumps({"items": answers})
    return "not json"


@pytest.mark.parametrize("kind", ["local", "openai"])
async def test_a_correction_outlasts_a_newer_routine_lookup_with_each_judge(
    own: tuple[Settings, Database], temporal_client: Client, kind: str
) -> None:
    settings, db = own
    tenant_id = await new_tenant(db)
    local = LocalJudge(build_embedder(settings.models))
    if kind == "local":
        await _run_lane(settings, db, temporal_client, local, tenant_id, "judged")
    else:
        with serve_fake_openai() as fake:
            fake.answer = _stand_in_model
            judge = OpenAIJudge(base_url=fake.base_url, api_key="test", model="stand-in", fallback=local)
            await _run_lane(settings, db, temporal_client, judge, tenant_id, "judged")
            asked = [r["response_format"]["json_schema"]["name"] for r in fake.requests]
        # The model was asked for the acts and its answers stood: the embedded judge answered nothing.
        assert "judge_acts" in asked and judge.fallbacks == 0, asked
    judged = await _judged(db, tenant_id)
    assert judged[CORRECTION] == (Act.CORRECTION.value, ACT_FLOORS[Act.CORRECTION])
    # Said calmly by a person whose messages are all calm: the lookup's floor decides.
    assert judged[LOOKUP] == (Act.LOOKUP.value, ACT_FLOORS[Act.LOOKUP])
    on = await _activations(db, tenant_id, "judged", salience=True)
    assert on[LOOKUP] < on[CORRECTION]
    # Today's behaviour, for contrast: every encoding 1, so the newer lookup would be the more active.
    off = await _activations(db, tenant_id, "judged", salience=False)
    assert off[LOOKUP] > off[CORRECTION]


async def test_with_salience_off_the_lane_judges_no_acts(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    off = settings.replace(salience=False)
    tenant_id = await new_tenant(db)
    await _run_lane(off, db, temporal_client, LocalJudge(build_embedder(off.models)), tenant_id, "unjudged")
    assert await _judged(db, tenant_id) == {CORRECTION: (None, None), LOOKUP: (None, None)}
    on = await _activations(db, tenant_id, "unjudged", salience=True)
    assert on[LOOKUP] > on[CORRECTION]  # nothing judged: every encoding counts 1, the newer is the more active
