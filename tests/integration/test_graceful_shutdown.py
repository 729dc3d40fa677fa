"""A rolling update loses no work: SIGTERM lets the worker's running lane job finish and the gateway's streamed
reply end, each process then leaving on its own, on the real Temporal dev server and Postgres."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from config.settings import Settings
from contracts.lane_names import workflow_id
from tests.fake_upstream import serve_fake_upstream
from tests.integration.conftest import ADMIN_TOKEN
from tests.support import eventually, free_port, fresh_database, serve_gateway

ROOT = Path(__file__).resolve().parents[2]
SLOW_SCORING_SECONDS = 4.0


def _chat(*contents: str, **extra: Any) -> dict[str, Any]:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(contents)]
    return {"model": "gpt-4o-mini", "messages": messages, **extra}


async def _tenant(http: httpx.AsyncClient) -> tuple[str, str]:
    made = await http.post("/v1/admin/tenants", json={"name": f"shutdown-{uuid.uuid4().hex[:8]}"},
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert made.status_code == 201, made.text
    return made.json()["tenant_id"], made.json()["api_key"]


async def _exit_code(proc: subprocess.Popen[bytes], timeout: float) -> int:
    return await asyncio.wait_for(asyncio.to_thread(proc.wait), timeout)


async def test_sigterm_lets_the_workers_running_job_finish(
    settings: Settings, postgres_url: str, temporal_client: Client, tmp_path: Path
) -> None:
    # A deployment of its own (database, task queue): no other worker may take its jobs.
    own = settings.replace(database_url=await fresh_database(postgres_url), port=free_port(),
                           temporal_task_queue="shutdown-" + uuid.uuid4().hex[:8],
                           worker_graceful_shutdown_seconds=30)
    marker = tmp_path / "scoring"
    env = {**os.environ, **own.as_environment(), "LETHE_WORKER_HEALTH_PORT": "0"}
    worker = subprocess.Popen([sys.executable, "-m", "tests.slow_judge_worker", str(marker),
                               str(SLOW_SCORING_SECONDS)], cwd=ROOT, env=env)
    try:
        async with serve_gateway(own) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            tenant_id, key = await _tenant(http)
            auth = {"Authorization": f"Bearer {key}"}
            first = await http.post("/v1/memories/rollout/decorate", json=_chat("Plan the Lisbon trip."),
                                    headers=auth)
            assert first.status_code == 200, first.text
            reply = {"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Three days: Alfama, Belem, Sintra."}}]}
            reported = await http.post("/v1/memories/rollout/report", headers=auth,
                                       json={"decorate_id": first.json()["decorate_id"], "response": reply})
            assert reported.status_code == 200, reported.text
            # The next user message closes the first turn: the lane scores its boundaries (the slow job).
            second = _chat("Plan the Lisbon trip.", "Three days: Alfama, Belem, Sintra.", "Add a day in Porto.")
            assert (await http.post("/v1/memories/rollout/decorate", json=second, headers=auth)).status_code == 200

            async def scoring_started() -> bool:
                assert worker.poll() is None, "the worker died"
                return marker.exists() and marker.read_text() == "started"

            await eventually(scoring_started, timeout=90)
        worker.send_signal(signal.SIGTERM)
        assert await _exit_code(worker, timeout=60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert marker.read_text() == "finished"
    # Temporal recorded the job as completed, not cancelled or timed out: nobody runs it again.
    handle = temporal_client.get_workflow_handle(workflow_id(tenant_id, "rollout"))
    names: dict[int, str] = {}
    completed, failed = [], []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            completed.append(names[event.activity_task_completed_event_attributes.scheduled_event_id])
        elif event.event_type in (EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
                                  EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
                                  EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED):
            failed.append(event.event_type)
    assert "score_boundaries" in completed
    assert not failed


async def test_sigterm_lets_the_gateways_streamed_reply_end(
    settings: Settings, postgres_url: str, tmp_path: Path
) -> None:
    with serve_fake_upstream() as upstream:
        upstream.delay = 0.4  # seconds before each streamed event: the reply is still coming at SIGTERM
        own = settings.replace(database_url=await fresh_database(postgres_url), port=free_port(),
                               temporal_task_queue="shutdown-" + uuid.uuid4().hex[:8], gateway_shutdown_seconds=20)
        env = {**os.environ, **own.as_environment(), "LETHE_LOG_JSON": "false"}
        gateway = subprocess.Popen([sys.executable, "-m", "cli.main", "gateway"], cwd=ROOT, env=env)
        url = f"http://127.0.0.1:{own.gateway.port}"
        try:
            async with httpx.AsyncClient(base_url=url, timeout=30) as http:
                async def up() -> bool:
                    assert gateway.poll() is None, "the gateway died"
                    try:
                        return (await http.get("/healthz")).status_code == 200
                    except httpx.TransportError:
                        return False

                await eventually(up, timeout=60)
                _, key = await _tenant(http)
                headers = {"Authorization": f"Bearer {key}", "X-Lethe-Memory": "streamed",
                           "X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": "sk-fake-0123456789"}
                body = _chat("Tell me about the tides of the Tagus estuary.", stream=True)
                events = []
                async with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as streamed:
                    assert streamed.status_code == 200
                    async for line in streamed.aiter_lines():
                        if not line.startswith("data: "):
                            continue
                        events.append(line.removeprefix("data: "))
                        if len(events) == 1:
                            gateway.send_signal(signal.SIGTERM)
                assert len(events) > 3 and events[-1] == "[DONE]"
                # Stopped taking calls: a new one finds nobody listening.
                try:
                    refused = (await http.get("/healthz")).status_code
                except httpx.TransportError:
                    refused = 0
                assert refused != 200
            # uvicorn ends by raising the signal it caught again, once everything has closed (exit 143).
            assert await _exit_code(gateway, timeout=30) in (0, -signal.SIGTERM)
        finally:
            if gateway.poll() is None:
                gateway.kill()
