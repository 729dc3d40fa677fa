"""A memory erased while one of its lane jobs runs: the job, back from its judge, finds the memory gone and ends
quietly, with no error in the worker's log and nothing parked; on the real Temporal dev server and Postgres."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from cli.worker import build_judge
from config.settings import Settings
from contracts.lane_names import MEMORY_ERASED, workflow_id
from store.db import Database
from store.repositories import memories
from tests.integration.workflows.lane_support import http_tenant, scalar
from tests.support import HeldJudge, eventually, serving

MEMORY = "erased-mid-job"


@dataclass
class Scoring:
    http: httpx.AsyncClient
    auth: dict[str, str]
    tenant_id: str
    judge: HeldJudge
    db: Database  # the deployment's own database, as its owner


def _chat(*contents: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": c}
                                       for i, c in enumerate(contents)]}


@asynccontextmanager
async def scoring_held(settings: Settings, temporal_client: Client) -> AsyncIterator[Scoring]:
    """A deployment of the test's own whose memory has a closed turn, its scoring held after it began."""
    judge = HeldJudge(build_judge(settings.models), "score_boundaries")
    async with serving(settings, temporal_client, "erased", judge=judge) as running:
        http = running.http
        try:
            tenant_id, key = await http_tenant(http)
            auth = {"Authorization": f"Bearer {key}"}
            first = await http.post(f"/v1/memories/{MEMORY}/decorate", json=_chat("Book the venue."), headers=auth)
            reply = {"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Booked for Friday."}}]}
            reported = await http.post(f"/v1/memories/{MEMORY}/report", headers=auth,
                                       json={"decorate_id": first.json()["decorate_id"], "response": reply})
            assert reported.status_code == 200, reported.text
            # The next user message closes the turn, so the lane scores it.
            second = await http.post(f"/v1/memories/{MEMORY}/decorate", headers=auth,
                                     json=_chat("Book the venue.", "Booked for Friday.", "And the caterer?"))
            assert second.status_code == 200, second.text
            await asyncio.wait_for(judge.begun.wait(), timeout=60)
            yield Scoring(http, auth, tenant_id, judge, running.db)
        finally:
            judge.go_on.set()  # nothing left waiting when the worker shuts down


def _ended_quietly(caplog: pytest.LogCaptureFixture) -> bool:
    return any("erased while it ran" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("named_again", [False, True], ids=["erased", "erased-and-named-again"])
async def test_an_erase_during_a_job_leaves_no_error_in_the_worker_log(
    settings: Settings, temporal_client: Client, caplog: pytest.LogCaptureFixture, named_again: bool
) -> None:
    caplog.set_level(logging.INFO)
    async with scoring_held(settings, temporal_client) as held:
        erased = await held.http.delete(f"/v1/memories/{MEMORY}", headers=held.auth)
        assert erased.status_code == 200, erased.text
        if named_again:  # a new memory of the same name, as an agent that clears its session and goes on
            again = await held.http.post(f"/v1/memories/{MEMORY}/decorate", json=_chat("Start over."),
                                         headers=held.auth)
            assert again.status_code == 200, again.text
        held.judge.go_on.set()  # the job writes its scores for a memory that is gone

        async def ended() -> bool:
            return _ended_quietly(caplog)

        await eventually(ended, timeout=60)
        scores = await scalar(held.db, "SELECT count(*) FROM boundary_scores WHERE tenant_id = :t", t=held.tenant_id)
    assert scores == 0
    loud = [f"{r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.WARNING and r.name.startswith(("temporalio", "activities", "workflows"))]
    assert loud == []


async def test_a_lane_that_outlives_its_erased_memory_parks_nothing(
    settings: Settings, temporal_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with scoring_held(settings, temporal_client) as held:
        # Erased in Postgres alone, as when Temporal is away during the erase: the workflow keeps running.
        async with held.db.session() as session, session.begin():
            await memories.erase_memory(session, tenant_id=held.tenant_id, memory_id=MEMORY)
        held.judge.go_on.set()
        handle = temporal_client.get_workflow_handle(workflow_id(held.tenant_id, MEMORY))

        async def after_the_failure() -> list[str]:
            """The activities the lane scheduled once the held job failed as erased (empty until it has)."""
            events = [e async for e in handle.fetch_history_events()]
            failed = [i for i, e in enumerate(events) if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
                      and e.activity_task_failed_event_attributes.failure.application_failure_info.type
                      == MEMORY_ERASED]
            return [e.activity_task_scheduled_event_attributes.activity_type.name for e in events[failed[0]:]
                    if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED] if failed else []

        try:
            # The lane records the event and goes on, without a park_job for the failed job.
            scheduled = await eventually(lambda: _until_recorded(after_the_failure), timeout=60)
        finally:
            await handle.terminate(reason="test over")
    assert "park_job" not in scheduled
    assert _ended_quietly(caplog)


async def _until_recorded(after_the_failure: Any) -> list[str]:
    scheduled = await after_the_failure()
    return scheduled if "record_event" in scheduled else []
