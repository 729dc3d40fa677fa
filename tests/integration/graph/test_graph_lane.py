"""The graph job in the lane: an OpenAI-compatible judge drives resolution and retirement as the embedded one
does, and a worker killed with SIGKILL mid-resolution leaves, once restarted, the graph an unbroken run makes.

A deployment of this module's own (its own database and task queue), so no other gateway's relay runs it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from cli.worker import build_embedder, build_worker
from config.settings import Settings
from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from store.db import Database
from tests.integration.graph.graph_support import graph_of, items, write_note
from tests.integration.providers.openai_fake import serve_fake_openai
from tests.integration.workflows.lane_support import new_tenant, scalar
from tests.integration.workflows.lane_support import signal as signal_lane
from tests.support import eventually, own_deployment

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2031, 5, 1, 9, 0, tzinfo=UTC)

NOTES = [
    [{"note": "Dana owns the checkout migration.", "subject": "Dana", "object": "checkout migration",
      "source": "user"},
     {"note": "The launch is on Wednesday.", "subject": "launch", "object": "Wednesday", "source": "user"}],
    [{"note": "Dana Whitfield approved the pricing copy.", "subject": "Dana Whitfield", "object": "pricing copy",
      "source": "user"},
     {"note": "The launch moved to Thursday.", "subject": "launch", "object": "Thursday", "source": "user"}],
    [{"note": "Dana Lee runs the design review.", "subject": "Dana Lee", "object": "design review",
      "source": "user"}],
]


@pytest.fixture(scope="module")
async def own(settings: Settings) -> AsyncIterator[tuple[Settings, Database]]:
    async with own_deployment(settings, "graph") as deployment:
        yield deployment


async def _write_all(db: Database, tenant_id: str, memory_id: str, batches: list[list[dict[str, Any]]]) -> int:
    seq = 0
    for n, notes in enumerate(batches):
        seq = await write_note(db, tenant_id, memory_id, f"{memory_id}-{n}", notes, T0 + timedelta(hours=n))
    return seq


async def _done(db: Database, tenant_id: str) -> bool:
    left = await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL", t=tenant_id)
    return left == 0


def _model(body: dict[str, Any]) -> str:
    """A stand-in model for the graph's two judgments; anything else gets junk (the judge falls back)."""
    task = body.get("response_format", {}).get("json_schema", {}).get("name")
    prompt = body["messages"][-1]["content"]
    if task == "judge_same_entity":
        daners = {"'Dana'", "'Dana Whitfield'", "'our PM Dana'"}
        answers = []
        for i, line in items(prompt):
            names = set(re_names(line))
            same = names <= daners and len(names) > 1
            answers.append({"i": i, "same": same, "score": 0.9 if same else 0.1})
        return json.dumps({"items": answers})
    if task == "judge_contradiction":
        answers = []
        for i, line in items(prompt):
            older, newer = line.split(" | newer: ")
            relation = "contradicts" if "Wednesday" in older and "Thursday" in newer else "unrelated"
            answers.append({"i": i, "relation": relation, "score": 0.9})
        return json.dumps({"items": answers})
    return "not json"


def re_names(line: str) -> list[str]:
    return re.findall(r"'[^']+'", line)


async def test_openai_compatible_judge_drives_resolution_and_retirement(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    tenant_id = await new_tenant(db)
    embedder = build_embedder(settings.models)
    with serve_fake_openai() as fake:
        fake.answer = _model
        judge = OpenAIJudge(base_url=fake.base_url, api_key="test", model="stand-in", fallback=LocalJudge(embedder))
        async with build_worker(temporal_client, db, task_queue=settings.temporal.task_queue, settings=settings,
                                judge=judge):
            seq = await _write_all(db, tenant_id, "remote", NOTES)
            await signal_lane(temporal_client, tenant_id, "remote", seq, settings.temporal.task_queue)
            await eventually(lambda: _done(db, tenant_id), timeout=90)
        asked = {r["response_format"]["json_schema"]["name"] for r in fake.requests}
    assert {"judge_same_entity", "judge_contradiction"} <= asked  # the model was asked, and its answers stood
    graph = await graph_of(db, tenant_id, "remote")
    entities = dict(graph["entities"])
    assert entities["Dana"] == ("Dana", "Dana Whitfield") and entities["Dana Lee"] == ("Dana Lee",)
    retired = {f[0]: f[4] for f in graph["facts"]}
    assert retired["The launch is on Wednesday."] == "The launch moved to Thursday."
    assert retired["The launch moved to Thursday."] == "None"


def _worker(settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database.url, "LETHE_ENV": "development",
           "LETHE_TEMPORAL_ADDRESS": settings.temporal.address, "LETHE_WORKER_HEALTH_PORT": "0",
           "LETHE_TEMPORAL_TASK_QUEUE": settings.temporal.task_queue, "LETHE_LOG_JSON": "false"}
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "cli.main", "worker"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def _many() -> list[list[dict[str, Any]]]:
    """Enough facts that a kill lands mid-resolution: people under several names, owners replaced, restatements."""
    people = ["Dana", "Dana Whitfield", "our PM Dana", "Raj", "Raj Patel", "Priya", "Dana Lee", "Marco"]
    things = ["checkout migration", "pricing page", "tax table", "design review", "refund line", "QA rota"]
    batches = []
    for n in range(6):
        batch = []
        for k in range(5):
            who, what = people[(n + k) % len(people)], things[(n * 2 + k) % len(things)]
            batch.append({"note": f"{who} owns the {what}.", "subject": who, "object": what,
                          "source": "user" if k % 2 else "assistant"})
        batch.append({"note": f"The {things[n % len(things)]} is owned by {people[n % len(people)]}.",
                      "subject": things[n % len(things)], "object": people[n % len(people)], "source": "user"})
        batches.append(batch)
    return batches


async def test_worker_killed_mid_resolution_leaves_the_graph_an_unbroken_run_makes(
    own: tuple[Settings, Database], temporal_client: Client, tmp_path: Path
) -> None:
    settings, db = own
    tenant_id = await new_tenant(db)
    batches = _many()
    log = tmp_path / "worker.log"
    worker = _worker(settings, log)
    try:
        seq = await _write_all(db, tenant_id, "calm", batches)
        await signal_lane(temporal_client, tenant_id, "calm", seq, settings.temporal.task_queue)
        await eventually(lambda: _done(db, tenant_id), timeout=120)

        seq = await _write_all(db, tenant_id, "killed", batches)
        await signal_lane(temporal_client, tenant_id, "killed", seq, settings.temporal.task_queue)

        async def partly() -> bool:
            done = await scalar(db, "SELECT count(*) FROM facts f JOIN memories m ON m.id = f.memory_pk "
                                "WHERE m.tenant_id = :t AND m.memory_id = 'killed' AND f.integrated_at IS NOT NULL",
                                t=tenant_id)
            return done >= 6

        await eventually(partly, timeout=120, every=0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        left = await scalar(db, "SELECT count(*) FROM facts f JOIN memories m ON m.id = f.memory_pk WHERE "
                            "m.tenant_id = :t AND m.memory_id = 'killed' AND f.integrated_at IS NULL", t=tenant_id)
        assert left > 0, "the worker was to die mid-resolution"
        worker = _worker(settings, log)
        await eventually(lambda: _done(db, tenant_id), timeout=180)
    finally:
        worker.kill()
        worker.wait()
    calm, killed = await graph_of(db, tenant_id, "calm"), await graph_of(db, tenant_id, "killed")
    assert killed == calm
    assert any(len(aliases) > 1 for _, aliases in calm["entities"])  # resolution merged names
    assert any(f[3] != "None" for f in calm["facts"]) and any(f[4] != "None" for f in calm["facts"])


async def test_assistant_inference_stands_beside_the_user_fact_until_the_user_settles_it(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    tenant_id = await new_tenant(db)
    said = {"note": "The offsite is in Lisbon.", "subject": "offsite", "object": "Lisbon", "source": "user"}
    guess = {"note": "The offsite is in Porto.", "subject": "offsite", "object": "Porto", "source": "assistant"}
    settles = {"note": "The offsite is definitely in Porto.", "subject": "offsite", "object": "Porto",
               "source": "user"}
    async with build_worker(temporal_client, db, task_queue=settings.temporal.task_queue, settings=settings):
        seq = await _write_all(db, tenant_id, "conflict", [[said], [guess]])
        await signal_lane(temporal_client, tenant_id, "conflict", seq, settings.temporal.task_queue)
        await eventually(lambda: _done(db, tenant_id), timeout=60)
        open_conflict = {f[0]: f for f in (await graph_of(db, tenant_id, "conflict"))["facts"]}
        # Both stand, each naming the other; nothing retired.
        assert open_conflict[said["note"]][5] == guess["note"] and open_conflict[guess["note"]][5] == said["note"]
        assert all(f[4] == "None" for f in open_conflict.values())

        seq = await write_note(db, tenant_id, "conflict", "conflict-2", [settles], T0 + timedelta(hours=5))
        await signal_lane(temporal_client, tenant_id, "conflict", seq, settings.temporal.task_queue)
        await eventually(lambda: _done(db, tenant_id), timeout=60)
    settled = {f[0]: f for f in (await graph_of(db, tenant_id, "conflict"))["facts"]}
    assert settled[said["note"]][4] == guess["note"]  # Lisbon retired by the fact that stands
    assert settled[settles["note"]][3] == guess["note"]  # the user's word merged into Porto
    assert settled[guess["note"]][5] == "None" and settled[guess["note"]][6] == "user"


async def test_facts_from_before_the_graph_are_brought_in_by_the_lane(
    own: tuple[Settings, Database], temporal_client: Client
) -> None:
    settings, db = own
    tenant_id = await new_tenant(db)
    # Facts as migration 0010 leaves them (not integrated), then the memory's next event: a decorate.
    seq = await write_note(db, tenant_id, "old", "old-0", NOTES[0] + NOTES[1], T0, kind="decorate")
    async with build_worker(temporal_client, db, task_queue=settings.temporal.task_queue, settings=settings):
        await signal_lane(temporal_client, tenant_id, "old", seq, settings.temporal.task_queue)
        await eventually(lambda: _done(db, tenant_id), timeout=60)
    graph = await graph_of(db, tenant_id, "old")
    # One note call named her both ways: the most specific name is canonical.
    assert dict(graph["entities"])["Dana Whitfield"] == ("Dana", "Dana Whitfield")
    assert {f[0]: f[4] for f in graph["facts"]}["The launch is on Wednesday."] == "The launch moved to Thursday."
