"""The lane under stress, on a Temporal dev server of this module's own (so it can be stopped, and so its
dynamic config can suggest continue-as-new after a few dozen history events), with its own gateway over HTTP:

- continue-as-new loses and reorders no event;
- a worker killed with SIGKILL mid-lane and restarted completes every job exactly once in effect;
- with Temporal stopped, decorate and report answer 200, and the outbox drains in order once it is back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from cli.temporal import connect_temporal
from cli.worker import build_judge, build_worker
from config.groups import ModelSettings
from config.settings import Settings
from providers.judge import Judge
from store.db import Database
from tests.integration.workflows.lane_support import http_tenant, scalar, unprocessed
from tests.integration.workflows.recorded import record_histories
from tests.support import dev_server, eventually, free_port, fresh_database, serve_gateway
from workflows.memory import MemoryWorkflow, workflow_id

ROOT = Path(__file__).resolve().parents[3]
# Low enough that a dozen turns continue-as-new several times.
SUGGEST_CONTINUE_AS_NEW_AFTER = 40
TOPICS = [
    "The pricing page launches on March 14; legal must approve the refund line first.",
    "Dana owns the checkout migration and needs the tax rate table before she starts.",
    "The annual plan is priced at 480 dollars, the monthly at 45 dollars.",
    "Finance wants the pricing table exported as CSV to check the annual prices.",
    "The onboarding email sequence has five messages and starts the day after signup.",
    "Our QA owner is Priya; she blocks releases that lack a rollback plan.",
]


@dataclass
class OwnTemporal:
    port: int
    db_file: str
    env: WorkflowEnvironment | None = None
    stopped: list[bool] = field(default_factory=list)

    async def start(self) -> None:
        self.env = await dev_server(
            self.port, dev_server_database_filename=self.db_file,
            dev_server_extra_args=["--dynamic-config-value",
                                   f"limit.historyCount.suggestContinueAsNew={SUGGEST_CONTINUE_AS_NEW_AFTER}"],
        )

    async def stop(self) -> None:
        if self.env is not None:
            await self.env.shutdown()
            self.env = None


@pytest.fixture(scope="module")
async def own_temporal() -> AsyncIterator[OwnTemporal]:
    folder = tempfile.mkdtemp(prefix="lethe-lane-temporal-")
    server = OwnTemporal(port=free_port(), db_file=str(Path(folder) / "temporal.db"))
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="module")
async def own_settings(settings: Settings, own_temporal: OwnTemporal) -> Settings:
    # A deployment of its own: its own Temporal and its own database (see tests.support.fresh_database).
    return settings.replace(
        temporal_address=f"127.0.0.1:{own_temporal.port}", port=free_port(), ceiling_tokens=4000,
        temporal_task_queue="lane-" + uuid.uuid4().hex[:8],
        database_url=await fresh_database(settings.database.url))


@pytest.fixture(scope="module")
async def db(own_settings: Settings) -> AsyncIterator[Database]:
    """This module's database: the own deployment's, not the session's."""
    database = Database(own_settings.database.url, pool_size=5)
    yield database
    await database.dispose()


@pytest.fixture(scope="module")
async def own_http(own_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_gateway(own_settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def judge() -> Judge:
    return build_judge(ModelSettings())


async def _converse(http: httpx.AsyncClient, key: str, memory_id: str, turns: int) -> int:
    """Decorate and report `turns` times over HTTP; returns the number of events written."""
    auth = {"Authorization": f"Bearer {key}"}
    for n in range(turns):
        topic = TOPICS[(n // 2) % len(TOPICS)]
        user = {"role": "user", "content": f"Turn {n}. {topic} What should we do next about it? " * 3}
        decorated = await http.post(f"/v1/memories/{memory_id}/decorate", headers=auth,
                                    json={"model": "gpt-4o-mini", "messages": [user]})
        assert decorated.status_code == 200, decorated.text
        reply = {"role": "assistant", "content": f"For turn {n}: {topic} I will follow up on that. " * 3}
        reported = await http.post(f"/v1/memories/{memory_id}/report", headers=auth, json={
            "decorate_id": decorated.json()["decorate_id"], "response": {"choices": [{"message": reply}]}})
        assert reported.status_code == 200, reported.text
    return 2 * turns


async def _processed_in_order(db: Database, tenant_id: str) -> None:
    # The lane marks each event processed after the one before it: seq order and time order agree.
    out_of_order = await scalar(db, (
        "SELECT count(*) FROM (SELECT seq, processed_at, lag(processed_at) OVER (ORDER BY seq) AS before "
        "FROM outbox WHERE tenant_id = :t) o WHERE o.processed_at < o.before"), t=tenant_id)
    assert out_of_order == 0


async def _no_duplicates(db: Database, tenant_id: str) -> None:
    overlapping = await scalar(db, (
        "SELECT count(*) FROM episodes a JOIN episodes b ON a.memory_pk = b.memory_pk AND a.id < b.id "
        "AND a.first_seq <= b.last_seq AND b.first_seq <= a.last_seq WHERE a.tenant_id = :t"), t=tenant_id)
    births = await scalar(db, (
        "SELECT count(*) FROM (SELECT episode_key FROM episode_transitions WHERE tenant_id = :t AND before IS NULL "
        "GROUP BY memory_pk, episode_key HAVING count(*) > 1) d"), t=tenant_id)
    encodings = await scalar(db, (
        "SELECT count(*) FROM (SELECT episode_key FROM traces WHERE tenant_id = :t AND encoding "
        "GROUP BY memory_pk, episode_key HAVING count(*) > 1) d"), t=tenant_id)
    assert (overlapping, births, encodings) == (0, 0, 0)


async def _lane_done(db: Database, tenant_id: str) -> bool:
    return await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t", t=tenant_id) > 0 and \
        await unprocessed(db, tenant_id) == 0


async def test_continue_as_new_loses_and_reorders_no_event(
    own_http: httpx.AsyncClient, own_settings: Settings, db: Database, judge: Judge
) -> None:
    tenant_id, key = await http_tenant(own_http)
    client = await connect_temporal(own_settings.temporal)
    async with build_worker(client, db, task_queue=own_settings.temporal.task_queue, settings=own_settings,
                            judge=judge):
        events = await _converse(own_http, key, "long", turns=12)
        await eventually(lambda: _lane_done(db, tenant_id), timeout=90)
        handle = client.get_workflow_handle(workflow_id(tenant_id, "long"))

        async def acknowledged() -> bool:
            # The activity marks its event processed in Postgres before the workflow hears it finished: the
            # workflow's own count follows a moment later. A lost event would never be acknowledged.
            return (await handle.query(MemoryWorkflow.lane)).done_seq == events

        try:
            await eventually(acknowledged, timeout=30)
        except AssertionError:
            pass  # described below
        state = await handle.query(MemoryWorkflow.lane)
        if state.done_seq != events:
            runs = [(w.run_id, w.status) async for w in client.list_workflows(
                f'WorkflowId = "{workflow_id(tenant_id, "long")}"')]
            desc = await handle.describe()
            history = [(e.event_type, str(e.activity_task_scheduled_event_attributes.activity_type.name))
                       for e in (await handle.fetch_history()).events]
            raise AssertionError(f"DIAG events={events} runs={runs} run={desc.run_id} state={state} "
                                 f"history={history}")

    runs = [w async for w in client.list_workflows(f'WorkflowId = "{workflow_id(tenant_id, "long")}"')]
    assert sum(w.status == WorkflowExecutionStatus.CONTINUED_AS_NEW for w in runs) >= 2
    assert (state.done_seq, state.jobs_run) == (events, events)  # every event, each once, across all runs
    await _processed_in_order(db, tenant_id)
    await _no_duplicates(db, tenant_id)
    await record_histories(client, runs, "continue_as_new")


def _worker_process(settings: Settings, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LETHE_DATABASE_URL": settings.database.url, "LETHE_ENV": "development",
           "LETHE_TEMPORAL_ADDRESS": settings.temporal.address, "LETHE_WORKER_HEALTH_PORT": "0",
           "LETHE_TEMPORAL_TASK_QUEUE": settings.temporal.task_queue, "LETHE_LOG_JSON": "false",
           "LETHE_CEILING_TOKENS": str(settings.mechanism.ceiling_tokens)}
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "cli.main", "worker"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


async def test_worker_killed_mid_lane_completes_every_job_once(
    own_http: httpx.AsyncClient, own_settings: Settings, db: Database, tmp_path: Path
) -> None:
    tenant_id, key = await http_tenant(own_http)
    events = await _converse(own_http, key, "killed", turns=12)  # queued: no worker is running yet
    log = tmp_path / "worker.log"
    worker = _worker_process(own_settings, log)
    try:
        async def some_done() -> bool:
            return await unprocessed(db, tenant_id) <= events - 3

        await eventually(some_done, timeout=60, every=0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        left = await unprocessed(db, tenant_id)
        assert 0 < left < events, "the worker was to die mid-lane"
        worker = _worker_process(own_settings, log)
        await eventually(lambda: _lane_done(db, tenant_id), timeout=120)
    finally:
        worker.kill()
        worker.wait()
    await _processed_in_order(db, tenant_id)
    await _no_duplicates(db, tenant_id)
    scored_twice = await scalar(db, (
        "SELECT count(*) FROM (SELECT unit_first_seq FROM boundary_scores WHERE tenant_id = :t "
        "GROUP BY memory_pk, unit_first_seq HAVING count(*) > 1) d"), t=tenant_id)
    assert scored_twice == 0


async def test_gateway_answers_while_temporal_is_down_and_the_outbox_drains_after(
    own_http: httpx.AsyncClient, own_settings: Settings, own_temporal: OwnTemporal, db: Database, judge: Judge
) -> None:
    tenant_id, key = await http_tenant(own_http)
    await own_temporal.stop()
    try:
        events = await _converse(own_http, key, "outage", turns=3)  # every call answered 200
        # Still ready: decorate and report need Postgres only; Temporal's state is reported apart.
        ready = await own_http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"postgres": "ok", "temporal": "unreachable"}
        await asyncio.sleep(1)
        undelivered = await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND delivered_at IS NULL",
                                   t=tenant_id)
        assert undelivered == events
    finally:
        await own_temporal.start()
    client = await connect_temporal(own_settings.temporal)
    async with build_worker(client, db, task_queue=own_settings.temporal.task_queue, settings=own_settings,
                            judge=judge):
        await eventually(lambda: _lane_done(db, tenant_id), timeout=60)
        handle = client.get_workflow_handle(workflow_id(tenant_id, "outage"))

        async def lane_caught_up() -> bool:
            # The database can show an event processed a moment before the workflow has the activity's result.
            return (await handle.query(MemoryWorkflow.lane)).done_seq == events

        try:
            await eventually(lane_caught_up, timeout=30)
        except AssertionError:
            runs = [(w.run_id, w.status) async for w in client.list_workflows(
                f'WorkflowId = "{workflow_id(tenant_id, "outage")}"')]
            history = [e.event_type for e in (await handle.fetch_history()).events]
            raise AssertionError(f"DIAG runs={runs} state={await handle.query(MemoryWorkflow.lane)} "
                                 f"history={history}") from None
    await _processed_in_order(db, tenant_id)
