"""Forgetting a fact while the lane is integrating it: the lane asks its judge holding no lock, so the forget
answers at once (it once waited out the judge's calls, holding the memory's row, and could deadlock with the
lane), and a claim forgotten meanwhile retires nothing; on the real Temporal dev server and Postgres."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from temporalio.client import Client

from cli.worker import build_judge
from config.settings import Settings
from tests.integration.workflows.lane_support import http_tenant, scalar
from tests.support import HeldJudge, eventually, memory_with_a_turn, serving

MEMORY = "edited"


async def test_a_fact_forgotten_while_the_lane_judges_it_is_forgotten_at_once_and_retires_nothing(
    settings: Settings, temporal_client: Client
) -> None:
    judge = HeldJudge(build_judge(settings.models), "judge_contradiction")
    async with serving(settings, temporal_client, "edited", judge=judge) as running:
        http, db = running.http, running.db
        tenant_id, key = await http_tenant(http)
        auth = {"Authorization": f"Bearer {key}"}
        try:
            await memory_with_a_turn(http, key, MEMORY)
            first = await http.post(f"/v1/memories/{MEMORY}/facts", headers=auth, json={
                "note": "Dana owns the Kestrel tax table.", "subject": "Dana", "object": "Kestrel tax table"})
            assert first.status_code == 201, first.text

            async def integrated(fact_key: str) -> bool:
                return bool(await scalar(db, "SELECT integrated_at IS NOT NULL FROM facts WHERE tenant_id = :t "
                                             "AND fact_key = :k", t=tenant_id, k=fact_key))

            await eventually(lambda: integrated(first.json()["id"]), timeout=60)
            second = await http.post(f"/v1/memories/{MEMORY}/facts", headers=auth, json={
                "note": "Priya owns the Kestrel tax table.", "subject": "Priya", "object": "Kestrel tax table"})
            assert second.status_code == 201, second.text
            await asyncio.wait_for(judge.begun.wait(), timeout=60)  # the lane is judging the second fact

            forgotten = await asyncio.wait_for(
                http.delete(f"/v1/memories/{MEMORY}/facts/{second.json()['id']}", headers=auth), timeout=10)
            assert forgotten.status_code == 200, forgotten.text
        finally:
            judge.go_on.set()
        await eventually(lambda: integrated(second.json()["id"]), timeout=60)
        async with db.session() as session:
            rows = (await session.execute(text(
                "SELECT fact_key, retired_at IS NULL, retired_by FROM facts WHERE tenant_id = :t"), {"t": tenant_id}
            )).all()
    # The first stands; the second is forgotten, and being forgotten, retired nothing.
    assert {key: (standing, by) for key, standing, by in rows} == {
        first.json()["id"]: (True, None), second.json()["id"]: (False, "forgotten")}
