"""Faults under load: a deployment of its own while several memories converse through decorate and report.

The deployment is the real one, on free ports and a throwaway directory: an embedded Postgres, a Temporal dev
server with its own database file, the worker as a child process run by `lethe dev`'s supervisor (which starts
it again when it dies), and the gateway. While the memories talk, in turn: the worker is killed with SIGKILL;
Temporal is stopped and, after a while, started again on the same port and file; Postgres is stopped and started
again. A client retries a 503 after its Retry-After with the same Idempotency-Key, as docs/integrate.md asks.

What is checked afterwards: every turn sent is stored exactly once, in order (each memory's export); every answer
during the Postgres outage was 503 with Retry-After and nothing else failed; the lane catches up (every event
processed, no job parked). The suite runs a short drill; `bench/faults.py` the long one (30 s, 15 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from cli.dev import WorkerSupervisor
from cli.devstack import start_temporal_dev_server
from cli.temporal import connect_temporal
from config.settings import Settings
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade_to_head
from tests.support import free_port, serve_gateway

__all__ = ["DrillPlan", "DrillReport", "run_drill"]

ADMIN = "fault-drill-admin-token"


@dataclass(frozen=True)
class DrillPlan:
    memories: int = 4
    temporal_down_seconds: float = 3.0
    postgres_down_seconds: float = 3.0
    turns_after: int = 2  # turns each memory still takes once the last fault is over
    pause_seconds: float = 0.2  # between one memory's turns
    catch_up_seconds: float = 90.0


@dataclass
class DrillReport:
    plan: dict[str, Any]
    turns: dict[str, int] = field(default_factory=dict)
    # Each memory's export, compared with what was sent: True when every turn is there once, in order.
    stored_exactly_once_in_order: dict[str, bool] = field(default_factory=dict)
    answered: dict[str, int] = field(default_factory=dict)  # successful calls per phase
    unavailable: dict[str, int] = field(default_factory=dict)  # 503 answers per phase
    unavailable_with_retry_after: bool = True
    other_errors: list[str] = field(default_factory=list)
    worker_restarted: bool = False
    lane_caught_up_seconds: float | None = None
    unprocessed_events: int = -1
    parked_jobs: int = -1
    seconds: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


class _Load:
    """The memories' conversations, and what every call answered, by the phase it was sent in."""

    def __init__(self, client: httpx.AsyncClient, key: str, report: DrillReport, plan: DrillPlan) -> None:
        self.client, self.key, self.report, self.plan = client, key, report, plan
        self.phase = "warm-up"
        self.ending = asyncio.Event()
        self.sent: dict[str, list[str]] = {}
        self.answered: Counter[str] = Counter()
        self.unavailable: Counter[str] = Counter()

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        key = hashlib.sha256(f"{path}:{json.dumps(body)}".encode()).hexdigest()
        headers = {"Authorization": f"Bearer {self.key}", "Idempotency-Key": key}
        while True:
            phase = self.phase
            response = await self.client.post(path, json=body, headers=headers)
            if response.status_code == 200:
                self.answered[phase] += 1
                return response.json()  # type: ignore[no-any-return]
            if response.status_code != 503:
                self.report.other_errors.append(f"{phase} {path}: {response.status_code} {response.text[:300]}")
                raise AssertionError(self.report.other_errors[-1])
            # Counted by the phase it was answered in: a call sent just before Postgres stopped (a slow save, while
            # Temporal was coming back) is refused because Postgres is down, whatever the phase it left in.
            self.unavailable[self.phase] += 1
            retry_after = response.headers.get("Retry-After", "")
            error = response.json().get("error", {})
            if not (retry_after.isdigit() and int(retry_after) > 0 and error.get("type") == "service_unavailable"):
                self.report.unavailable_with_retry_after = False
            await asyncio.sleep(min(float(retry_after or 1), 0.5))

    async def converse(self, memory_id: str) -> None:
        transcript: list[dict[str, Any]] = []
        sent = self.sent.setdefault(memory_id, [])
        after = 0
        turn = 0
        while after < self.plan.turns_after:
            question = f"{memory_id} turn {turn}: where does LTH-{turn} stand?"
            transcript.append({"role": "user", "content": question})
            sent.append(question)
            decorated = await self._call(f"/v1/memories/{memory_id}/decorate",
                                         {"model": "gpt-4o-mini", "messages": list(transcript)})
            answer = {"role": "assistant", "content": f"{memory_id} answer {turn}."}
            await self._call(f"/v1/memories/{memory_id}/report",
                             {"decorate_id": decorated["decorate_id"], "response": {"choices": [{"message": answer}]}})
            transcript.append(answer)
            sent.append(answer["content"])
            turn += 1
            after += self.ending.is_set()
            await asyncio.sleep(self.plan.pause_seconds)
        self.report.turns[memory_id] = turn


async def _temporal_up(settings: Settings, deadline: float = 60.0) -> None:
    started = time.monotonic()
    while True:
        try:
            await connect_temporal(settings.temporal)
            return
        except RuntimeError:
            if time.monotonic() - started > deadline:
                raise
            await asyncio.sleep(0.3)


async def _lane_backlog(url: str, tenant_id: str) -> tuple[int, int]:
    """Events not yet processed and jobs parked, for the drill's tenant (read as the owner: no row security)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            pending = (await connection.execute(text(
                "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL"), {"t": tenant_id}
            )).scalar_one()
            parked = (await connection.execute(text(
                "SELECT count(*) FROM lane_parked_jobs WHERE tenant_id = :t"), {"t": tenant_id})).scalar_one()
    finally:
        await engine.dispose()
    return int(pending), int(parked)


async def _kill_worker(supervisor: WorkerSupervisor, report: DrillReport) -> None:
    victim = supervisor.proc
    assert victim is not None
    os.kill(victim.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while supervisor.proc is victim or supervisor.proc is None:
        if time.monotonic() > deadline:
            return
        await asyncio.sleep(0.1)
    report.worker_restarted = True


async def run_drill(root: Path, plan: DrillPlan = DrillPlan()) -> DrillReport:  # noqa: B008 - frozen
    report = DrillReport(plan=asdict(plan))
    clock = time.monotonic()
    postgres = EmbeddedPostgres(root / "postgres")
    url = postgres.start()
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        env="development", database_url=url, data_dir=root, admin_token=SecretStr(ADMIN),
        temporal_address=f"127.0.0.1:{free_port()}", temporal_ui_port=free_port(),
        temporal_task_queue="drill-" + uuid.uuid4().hex[:8], port=free_port(), worker_health_port=0,
        log_json=False, log_level="WARNING",
    )
    stop = asyncio.Event()
    supervisor = WorkerSupervisor(settings, stop)
    temporal = None
    worker_task = None
    try:
        await upgrade_to_head(url)
        temporal = start_temporal_dev_server(settings, root / "temporal.log")
        await _temporal_up(settings)
        worker_task = asyncio.create_task(supervisor.run())
        async with serve_gateway(settings) as base, httpx.AsyncClient(base_url=base, timeout=60) as client:
            made = (await client.post("/v1/admin/tenants", json={"name": "drill"},
                                      headers={"Authorization": f"Bearer {ADMIN}"})).json()
            load = _Load(client, made["api_key"], report, plan)
            report.seconds["start"] = round(time.monotonic() - clock, 1)
            talking = asyncio.gather(*(load.converse(f"m{i}") for i in range(plan.memories)))
            await asyncio.sleep(1.5)

            load.phase = "worker-killed"
            await _kill_worker(supervisor, report)
            await asyncio.sleep(1.0)

            load.phase = "temporal-down"
            temporal.terminate()
            await asyncio.to_thread(temporal.wait)
            await asyncio.sleep(plan.temporal_down_seconds)
            temporal = start_temporal_dev_server(settings, root / "temporal.log")  # same port, same file
            load.phase = "temporal-back"
            await _temporal_up(settings)

            load.phase = "postgres-down"
            await asyncio.to_thread(postgres.stop)
            await asyncio.sleep(plan.postgres_down_seconds)
            assert postgres.start() == url
            load.phase = "after"
            load.ending.set()
            await talking
            report.seconds["load"] = round(time.monotonic() - clock - report.seconds["start"], 1)

            for memory_id, sent in load.sent.items():
                export = json.loads((await client.get(
                    f"/v1/memories/{memory_id}/export", headers={"Authorization": f"Bearer {made['api_key']}"}
                )).content)
                report.stored_exactly_once_in_order[memory_id] = \
                    [m["body"]["content"] for m in export["messages"]] == sent
            report.answered, report.unavailable = dict(load.answered), dict(load.unavailable)

            caught = time.monotonic()
            while True:
                report.unprocessed_events, report.parked_jobs = await _lane_backlog(url, made["tenant_id"])
                if report.unprocessed_events == 0 or time.monotonic() - caught > plan.catch_up_seconds:
                    break
                await asyncio.sleep(0.5)
            if report.unprocessed_events == 0:
                report.lane_caught_up_seconds = round(time.monotonic() - caught, 1)
    finally:
        supervisor.stop_worker()
        if worker_task is not None:
            with contextlib.suppress(Exception):
                await worker_task
        if temporal is not None and temporal.poll() is None:
            temporal.terminate()
            await asyncio.to_thread(temporal.wait)
        postgres.stop()
    report.seconds["total"] = round(time.monotonic() - clock, 1)
    return report
