"""What an operator scrapes: the worker's /metrics shows the lanes' backlog and parked jobs, behind the metrics
token; the gateway's /metrics shows its memory cache, how recall blocks were made, and the relay's lag, beside
the HTTP request counts."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import UTC, datetime

import httpx
from pydantic import SecretStr
from temporalio.client import Client

from cli.worker import run_worker
from config.settings import Settings
from store.db import Database
from store.repositories import lane, memories, outbox, tenants
from tests.integration.conftest import ADMIN_TOKEN
from tests.support import eventually, free_port, fresh_database, serve_gateway

TOKEN = "metrics-token-" + uuid.uuid4().hex


def value(text: str, name: str, **labels: str) -> float | None:
    """The sample `name` whose labels include `labels`, as Prometheus text shows it; None when there is none."""
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}(?:\{{(.*)\}})? (\S+)", line)
        if match and all(f'{k}="{v}"' in (match.group(1) or "") for k, v in labels.items()):
            return float(match.group(2))
    return None


async def _memory_with_backlog(url: str, *, events: int) -> tuple[str, str]:
    """A tenant's memory with `events` lane events the lane has not processed, and one parked job."""
    db = Database(url, pool_size=1)
    try:
        async with db.session() as session, session.begin():
            tenant = await tenants.create_tenant(session, name=f"metrics-{uuid.uuid4().hex[:8]}")
            memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="backlogged")
            for _ in range(events):
                outbox.add_event(session, tenant_id=tenant.id, memory=memory, kind="messages", payload={})
            await session.flush()
            # Delivered, not processed: the lane has them to do (no relay runs on this database anyway).
            await outbox.mark_delivered(session, tenant_id=tenant.id, memory_pk=memory.id, up_to_seq=events,
                                        at=datetime.now(UTC))
            await lane.park_job(session, tenant_id=tenant.id, memory_pk=memory.id, seq=1, job="score_traces",
                                error="judge unreachable")
        return tenant.id, "backlogged"
    finally:
        await db.dispose()


async def test_worker_metrics_show_the_lane_backlog_and_parked_jobs(
    settings: Settings, postgres_url: str, temporal_client: Client
) -> None:
    # A deployment of its own, so the figures are exactly this test's.
    own = settings.replace(database_url=await fresh_database(postgres_url), worker_health_port=free_port(),
                           temporal_task_queue="metrics-" + uuid.uuid4().hex[:8], metrics_token=SecretStr(TOKEN))
    tenant_id, memory_id = await _memory_with_backlog(own.database.url, events=3)
    stop = asyncio.Event()
    running = asyncio.create_task(run_worker(own, stop=stop))
    url = f"http://127.0.0.1:{own.worker.health_port}/metrics"
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            async def scraped() -> str:
                assert not running.done(), running.result()
                try:
                    answer = await http.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
                except httpx.TransportError:
                    return ""  # not listening yet
                return answer.text if "lethe_lane_backlog " in answer.text else ""

            text = await eventually(scraped, timeout=60)
            assert value(text, "lethe_lane_backlog") == 3
            assert value(text, "lethe_lane_backlog_memories") == 1
            assert value(text, "lethe_lane_backlog_memory", tenant_id=tenant_id, memory_id=memory_id) == 3
            assert value(text, "lethe_lane_parked_jobs") == 1
            assert value(text, "lethe_note_asks_pending") is not None  # counted in Temporal's visibility
            refused = await http.get(url)
            assert refused.status_code == 401 and "LETHE_METRICS_TOKEN" in refused.text
            assert (await http.get(url, headers={"Authorization": "Bearer wrong"})).status_code == 401
    finally:
        stop.set()
        await asyncio.wait_for(running, timeout=60)


async def test_gateway_metrics_show_cache_recall_and_relay_after_decorates(
    settings: Settings, worker: None
) -> None:
    mine = settings.replace(recall=True, port=free_port(), recall_inline_deadline_ms=20_000)
    async with serve_gateway(mine) as base, httpx.AsyncClient(base_url=base, timeout=60) as http:
        made = await http.post("/v1/admin/tenants", json={"name": f"metrics-{uuid.uuid4().hex[:8]}"},
                               headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        auth = {"Authorization": f"Bearer {made.json()['api_key']}"}
        before = (await http.get("/metrics")).text
        first = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Book the ferry to Naxos."}]}
        assert (await http.post("/v1/memories/ferry/decorate", json=first, headers=auth)).status_code == 200
        second = {"model": "gpt-4o-mini", "messages": [*first["messages"],
                  {"role": "assistant", "content": "Booked for Friday."},
                  {"role": "user", "content": "And a room in Chora."}]}
        assert (await http.post("/v1/memories/ferry/decorate", json=second, headers=auth)).status_code == 200

        def grew(after: str, name: str, by: float, **labels: str) -> bool:
            return (value(after, name, **labels) or 0) - (value(before, name, **labels) or 0) >= by

        async def relayed() -> str:
            text = (await http.get("/metrics")).text
            return text if grew(text, "lethe_relay_lag_seconds_count", 1) else ""

        after = await eventually(relayed)
        # The first decorate read a new memory (a miss), the second found its history cached (a hit).
        assert grew(after, "lethe_memory_cache_misses_total", 1)
        assert grew(after, "lethe_memory_cache_hits_total", 1)
        # Two new user messages, each recalled for: a young memory holds nothing to recall, so no block.
        assert grew(after, "lethe_recall_blocks_total", 2, provenance="none")
        assert grew(after, "lethe_http_requests_total", 2, route="/v1/memories/{memory_id}/decorate",
                    method="POST", status="200")

        # The session's worker runs in this process, so its activities are timed into the same registry.
        async def lane_ran() -> bool:
            text = (await http.get("/metrics")).text
            return grew(text, "lethe_activity_duration_seconds_count", 1, activity="fetch_events", outcome="ok")

        await eventually(lane_ran)
