"""Namesakes in the lane, with both judges: two people called Alex, one known as the CTO, one from the climbing
gym. A later mention by role or by description resolves to the right one; a bare "Alex" resolves to neither and
stays an unresolved entity of its own (kind `unresolved`, no alias), never merged into either.

A deployment of this module's own (its own database and task queue), as in `test_graph_lane`.
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
from providers.judge import Judge
from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from store.db import Database
from tests.integration.graph.graph_support import items, write_note
from tests.integration.providers.openai_fake import serve_fake_openai
from tests.integration.workflows.lane_support import new_tenant, scalar
from tests.integration.workflows.lane_support import signal as signal_lane
from tests.support import eventually, own_deployment

T0 = datetime(2031, 6, 1, 9, 0, tzinfo=UTC)

CTO = "Alex is our CTO."
HIRING = "Alex approved the Q3 hiring plan."
GYM = "Alex from the climbing gym belays the user on Thursdays."
BY_ROLE = "The CTO signed off the cloud budget."
BY_TIE = "Alex from the gym booked the bouldering wall for Saturday."
BARE = "Alex said the offsite moves to May."
BY_APPOSITION = "Alex, our CTO, wants the vendor list."

BATCHES = [
    [{"note": CTO, "subject": "Alex", "object": "CTO", "source": "user"},
     {"note": HIRING, "subject": "Alex", "object": "Q3 hiring plan", "source": "user"}],
    [{"note": GYM, "subject": "Alex from the climbing gym", "object": "user", "source": "user"}],
    [{"note": BY_ROLE, "subject": "the CTO", "object": "cloud budget", "source": "user"},
     {"note": BY_TIE, "subject": "Alex from the gym", "object": "bouldering wall", "source": "user"},
     {"note": BARE, "subject": "Alex", "object": "offsite", "source": "user"},
     {"note": BY_APPOSITION, "subject": "Alex", "object": "vendor list", "source": "user"}],
]


@pytest.fixture(scope="module")
async def own(settings: Settings) -> AsyncIterator[tuple[Settings, Database]]:
    async with own_deployment(settings, "namesakes") as deployment:
        yield deployment


async def _run(settings: Settings, db: Database, client: Client, judge: Judge, memory_id: str) -> str:
    tenant_id = await new_tenant(db)
    async with build_worker(client, db, task_queue=settings.temporal.task_queue, settings=settings, judge=judge):
        seq = 0
        for n, notes in enumerate(BATCHES):
            seq = await write_note(db, tenant_id, memory_id, f"{memory_id}-{n}", notes, T0 + timedelta(hours=n))
        await signal_lane(client, tenant_id, memory_id, seq, settings.temporal.task_queue)

        async def done() -> bool:
            return await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL",
                                t=tenant_id) == 0

        await eventually(done, timeout=120)
    return tenant_id


async def _subjects(db: Database, tenant_id: str) -> dict[str, tuple[int, str, str | None, list[str]]]:
    """Each fact's subject entity: id, canonical name, kind and every alias it has."""
    async with db.session() as session:
        rows = (await session.execute(text(
            "SELECT f.note, e.id, e.name, e.kind, coalesce(array_agg(a.name ORDER BY a.name) "
            "FILTER (WHERE a.name IS NOT NULL), '{}') FROM facts f JOIN entities e ON e.id = f.subject_entity_id "
            "LEFT JOIN entity_aliases a ON a.entity_id = e.id WHERE f.tenant_id = :t "
            "GROUP BY f.note, e.id, e.name, e.kind"), {"t": tenant_id})).all()
    return {note: (entity_id, name, kind, list(aliases)) for note, entity_id, name, kind, aliases in rows}


def _assert_resolved_by_description(subjects: dict[str, tuple[int, str, str | None, list[str]]]) -> None:
    cto, gym, bare = subjects[CTO], subjects[GYM], subjects[BARE]
    assert cto[0] != gym[0] and cto[2] is None and gym[2] is None  # two people named Alex
    # By role and by apposition: the CTO; by the place she is tied to: the one from the gym.
    assert subjects[HIRING][0] == subjects[BY_ROLE][0] == subjects[BY_APPOSITION][0] == cto[0]
    assert subjects[BY_TIE][0] == gym[0]
    # The bare name is neither: an entity of its own, marked unresolved, holding no alias.
    assert bare[0] not in (cto[0], gym[0]) and bare[1] == "Alex" and bare[2] == "unresolved" and bare[3] == []
    assert "Alex" in cto[3] and "the CTO" in cto[3] and "Alex from the gym" in gym[3]


async def test_embedded_judge_resolves_namesakes_by_what_the_memory_knows(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    judge = LocalJudge(build_embedder(settings.models))
    tenant_id = await _run(settings, db, temporal_client, judge, "local")
    _assert_resolved_by_description(await _subjects(db, tenant_id))


_SHOWN = re.compile(r"^'(?P<left>[^']+)'(?P<lrest>.*?) and '(?P<right>[^']+)'(?P<rrest>.*)$")


def _known(rest: str) -> set[str]:
    """The head words of what the prompt says the memory knows of one side (its `[...]`)."""
    shown = re.match(r"^(?: \(also called [^)]*\))? \[([^\]]*)\]", rest)
    return {p.split()[-1] for p in re.findall(r"'([^']+)'", shown[1])} if shown else set()


def _first(name: str) -> str | None:
    words = [w for w in re.findall(r"[A-Za-z]+", name) if w[0].isupper() and not w.isupper() and w != "The"]
    return words[0] if words else None


def _same(line: str) -> bool:
    """A stand-in model that guesses freely: a shared first name is the same person unless the descriptions
    shown clash, and a role is whoever is known as it. Left to it, a bare "Alex" would be both."""
    shown = _SHOWN.match(line)
    assert shown, line
    left, right = shown["left"], shown["right"]
    mine, theirs = _known(shown["lrest"]), _known(shown["rrest"])
    if _first(left) is None:
        return left.split()[-1].lower() in theirs or left.lower().removeprefix("the ") == right.lower()
    if _first(left) != _first(right):
        return False
    return not (mine and theirs and not mine & theirs)


def _model(body: dict[str, Any]) -> str:
    task = body.get("response_format", {}).get("json_schema", {}).get("name")
    prompt = body["messages"][-1]["content"]
    if task == "judge_same_entity":
        answers = [{"i": i, "same": _same(line), "score": 0.9 if _same(line) else 0.1} for i, line in items(prompt)]
        return json.dumps({"items": answers})
    if task == "judge_contradiction":
        return json.dumps({"items": [{"i": i, "relation": "unrelated", "score": 0.9} for i, _ in items(prompt)]})
    return "not json"


async def test_openai_compatible_judge_resolves_namesakes_and_never_guesses_a_bare_name(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    with serve_fake_openai() as fake:
        fake.answer = _model
        judge = OpenAIJudge(base_url=fake.base_url, api_key="test", model="stand-in",
                            fallback=LocalJudge(build_embedder(settings.models)))
        tenant_id = await _run(settings, db, temporal_client, judge, "remote")
        prompts = [r["messages"][-1]["content"] for r in fake.requests
                   if r["response_format"]["json_schema"]["name"] == "judge_same_entity"]
    # The model was shown what the memory knows of each Alex, and said yes to both for the bare name.
    assert any("known as 'cto'" in p and "tied to 'climbing gym'" in p for p in prompts)
    assert any(re.search(r"^Item \d+: 'Alex' \(Alex said", p, re.MULTILINE) for p in prompts)
    _assert_resolved_by_description(await _subjects(db, tenant_id))


async def test_a_role_names_its_one_current_holder_and_never_renames_the_person(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    handed = "Priya is our CTO now."
    after = "The CTO cancelled the offsite."
    batches = [
        # One note call: "the CTO" is Alex's, and Alex keeps her name (a role is not a more specific name).
        [{"note": CTO, "subject": "Alex", "object": "CTO", "source": "user"},
         {"note": BY_ROLE, "subject": "the CTO", "object": "cloud budget", "source": "user"}],
        [{"note": handed, "subject": "Priya", "object": "CTO", "source": "user"}],
        [{"note": after, "subject": "the CTO", "object": "offsite", "source": "user"}],
    ]
    tenant_id = await new_tenant(db)
    judge = LocalJudge(build_embedder(settings.models))
    async with build_worker(temporal_client, db, task_queue=settings.temporal.task_queue, settings=settings,
                            judge=judge):
        seq = 0
        for n, notes in enumerate(batches):
            seq = await write_note(db, tenant_id, "handed", f"handed-{n}", notes, T0 + timedelta(hours=n))
        await signal_lane(temporal_client, tenant_id, "handed", seq, settings.temporal.task_queue)

        async def done() -> bool:
            return await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL",
                                t=tenant_id) == 0

        await eventually(done, timeout=120)
    subjects = await _subjects(db, tenant_id)
    assert subjects[CTO][1] == "Alex" and subjects[BY_ROLE][0] == subjects[CTO][0]
    retired = await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND note = :n AND retired_by IS NOT "
                           "NULL", t=tenant_id, n=CTO)
    # Descriptions come from current facts only. Once the role changed hands (Alex's fact retired by the
    # contradiction judge) it names Priya; while both facts stand, two hold it, and it names neither.
    if retired:
        assert subjects[after][0] == subjects[handed][0]
    else:
        assert subjects[after][2] == "unresolved" and subjects[after][0] not in (subjects[handed][0], subjects[CTO][0])
