"""Parked lane jobs without SQL: a job that keeps failing is parked, `lethe jobs parked` and the admin API list
it, and `lethe jobs retry` runs it again through the memory's lane once its cause is gone, which marks it
resolved; on the real Temporal dev server and Postgres."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporalio.client import Client

from cli.worker import build_judge
from config.settings import Settings
from engine.cutting import BoundaryScores
from providers.judge import Judge
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.workflows.lane_support import http_tenant, scalar
from tests.support import eventually, serving

LETHE = str(Path(sys.executable).parent / "lethe")
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class FlakyScoring:
    """The configured judge, whose boundary scoring fails (bad data: parked at once) while `failing` is set."""

    def __init__(self, judge: Judge) -> None:
        self._judge, self.failing = judge, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    async def score_boundaries(self, units: Sequence[str], **kw: Any) -> list[BoundaryScores]:
        if self.failing:
            raise ValueError("the judge answered nonsense")
        return await self._judge.score_boundaries(units, **kw)


def _chat(*contents: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": c}
                                       for i, c in enumerate(contents)]}


async def test_a_parked_job_is_listed_and_retried_until_resolved(
    settings: Settings, temporal_client: Client
) -> None:
    judge = FlakyScoring(build_judge(settings.models))
    async with serving(settings, temporal_client, "parked", judge=judge) as running:
        http, db = running.http, running.db
        env = {**os.environ, **running.settings.as_environment(), "LETHE_WORKER_HEALTH_PORT": "0"}

        def lethe(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([LETHE, "jobs", *args], env=env, capture_output=True, text=True, timeout=60)

        tenant_id, key = await http_tenant(http)
        auth = {"Authorization": f"Bearer {key}"}
        first = await http.post("/v1/memories/flaky/decorate", json=_chat("Book the venue."), headers=auth)
        reply = {"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "Booked for Friday."}}]}
        await http.post("/v1/memories/flaky/report", headers=auth,
                        json={"decorate_id": first.json()["decorate_id"], "response": reply})
        # The next user message closes the turn: its scoring fails, and the lane parks it and moves on.
        await http.post("/v1/memories/flaky/decorate", headers=auth,
                        json=_chat("Book the venue.", "Booked for Friday.", "And the caterer?"))

        async def parked_and_moved_on() -> bool:
            parked = await scalar(db, "SELECT count(*) FROM lane_parked_jobs WHERE tenant_id = :t", t=tenant_id)
            left = await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL",
                                t=tenant_id)
            return bool(parked) and left == 0

        # Every event run (so no scoring parks after the listing), and at least one scoring parked.
        await eventually(parked_and_moved_on, timeout=90)
        listed = lethe("parked", "--json", "--tenant", tenant_id)
        assert listed.returncode == 0, listed.stderr
        # Each scoring the two decorates asked for may have failed: every row is that job's, open.
        rows = [json.loads(line) for line in listed.stdout.splitlines()]
        assert rows and {(r["memory_id"], r["job"], r["resolved_at"]) for r in rows} == {
            ("flaky", "score_boundaries", None)}
        assert all("nonsense" in r["error"] for r in rows)
        row = rows[-1]
        assert f"{row['id']}\t{tenant_id}\tflaky" in lethe("parked").stdout

        api = await http.get("/v1/admin/jobs/parked", params={"tenant_id": tenant_id}, headers=ADMIN)
        assert api.status_code == 200 and [j["id"] for j in api.json()] == [r["id"] for r in rows]
        assert (await http.get("/v1/admin/jobs/parked", headers=auth)).status_code == 401
        assert (await http.post("/v1/admin/jobs/parked/987654321/retry", headers=ADMIN)).status_code == 404
        scored = "SELECT count(*) FROM boundary_scores WHERE tenant_id = :t"
        assert await scalar(db, scored, t=tenant_id) == 0

        judge.failing = False  # the cause is fixed
        retried = lethe("retry", str(row["id"])) if len(rows) == 1 else \
            lethe("retry", "--memory", "flaky", "--tenant", tenant_id, "--all")
        assert retried.returncode == 0, retried.stderr
        assert retried.stdout.count("sent back to its lane") == len(rows)

        async def resolved() -> bool:
            return not await scalar(db, "SELECT count(*) FROM lane_parked_jobs WHERE tenant_id = :t "
                                        "AND resolved_at IS NULL", t=tenant_id)

        await eventually(resolved, timeout=60)
        assert await scalar(db, scored, t=tenant_id) > 0  # the job's work is done now
        assert lethe("parked", "--tenant", tenant_id).stdout.strip() == "no parked jobs"
        again = await http.post(f"/v1/admin/jobs/parked/{row['id']}/retry", headers=ADMIN)
        assert again.status_code == 409 and "resolved" in again.text
        unknown = lethe("retry", "987654321")
        assert unknown.returncode == 1 and "no parked job 987654321" in unknown.stderr
