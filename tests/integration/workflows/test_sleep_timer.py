"""The 24-hour sleep timer under time skipping: silence fires it and the sleep is prepared; a user message
resets it. Messages are stamped with the test server's clock, as the hot path stamps them with the request's."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from cli.converter import lethe_data_converter
from cli.worker import build_worker
from config.settings import Settings
from store.db import Database
from tests.integration.workflows.lane_support import add_turn, new_tenant, signal, sleeps_prepared, unprocessed
from tests.integration.workflows.recorded import record_histories
from tests.support import DEV_SERVER_STARTUP, eventually, fresh_database
from workflows import search_attributes as sa
from workflows.memory import MemoryWorkflow, workflow_id

TALK = "We are planning the pricing page launch; legal must review the refund line before it ships. " * 3


@pytest.fixture(scope="module")
async def skipping() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=lethe_data_converter, test_server_startup_timeout=DEV_SERVER_STARTUP,
    )
    # The test server lists nothing, so add every attribute directly.
    await env.client.operator_service.add_search_attributes(AddSearchAttributesRequest(
        namespace="default",
        search_attributes={k.name: IndexedValueType.ValueType(int(k.indexed_value_type)) for k in sa.ALL},
    ))
    yield env
    await env.shutdown()


@pytest.fixture(scope="module")
async def db(settings: Settings) -> AsyncIterator[Database]:
    """A database of this module's own: the session gateway's relay must not deliver these events elsewhere."""
    database = Database(await fresh_database(settings.database.url), pool_size=5)
    yield database
    await database.dispose()


@pytest.fixture(scope="module")
async def skipping_worker(skipping: WorkflowEnvironment, db: Database) -> AsyncIterator[str]:
    task_queue = "sleep-" + uuid.uuid4().hex[:8]
    worker: Worker = build_worker(skipping.client, db, task_queue=task_queue)
    async with worker:
        yield task_queue


async def _turn(env: WorkflowEnvironment, db: Database, tenant_id: str, task_queue: str, n: int) -> None:
    seq = await add_turn(db, tenant_id, "m", at=await env.get_current_time(), user=f"{n}: {TALK}",
                         reply=f"Noted {n}. {TALK}")
    await signal(env.client, tenant_id, "m", seq, task_queue)
    await eventually(lambda: _idle(db, tenant_id))


async def _idle(db: Database, tenant_id: str) -> bool:
    return await unprocessed(db, tenant_id) == 0


async def test_25_hours_of_silence_fire_the_timer_and_prepare_the_sleep(
    skipping: WorkflowEnvironment, skipping_worker: str, db: Database
) -> None:
    tenant_id = await new_tenant(db)
    for n in range(3):
        await _turn(skipping, db, tenant_id, skipping_worker, n)
    last_user = await skipping.get_current_time()
    assert await sleeps_prepared(db, tenant_id) == []

    await skipping.sleep(timedelta(hours=25))

    prepared = await eventually(lambda: sleeps_prepared(db, tenant_id))
    assert len(prepared) == 1 and abs(prepared[0] - last_user) < timedelta(seconds=5)
    handle = skipping.client.get_workflow_handle(workflow_id(tenant_id, "m"))
    state = await handle.query(MemoryWorkflow.lane)
    assert state.status is not None and state.status.sleep_prepared_for == prepared[0]
    await record_histories(skipping.client, [await handle.describe()], "sleep_timer")
    # Prepared means the next turn only picks: every closed turn is in an episode already, while the turn in
    # progress (its user may still be mid-task) is left whole.
    async with db.session() as session:
        rows = (await session.execute(text(
            "SELECT m.turn, EXISTS (SELECT 1 FROM episodes e WHERE e.memory_pk = m.memory_pk "
            "AND m.seq BETWEEN e.first_seq AND e.last_seq) FROM messages m WHERE m.tenant_id = :t"),
            {"t": tenant_id})).all()
    last = max(turn for turn, _ in rows)
    assert all(cut for turn, cut in rows if turn < last)
    assert not any(cut for turn, cut in rows if turn == last)


async def test_a_user_message_at_hour_23_resets_the_timer(
    skipping: WorkflowEnvironment, skipping_worker: str, db: Database
) -> None:
    tenant_id = await new_tenant(db)
    await _turn(skipping, db, tenant_id, skipping_worker, 0)
    await skipping.sleep(timedelta(hours=23))
    await _turn(skipping, db, tenant_id, skipping_worker, 1)
    second = await skipping.get_current_time()

    await skipping.sleep(timedelta(hours=2))  # 25 h after the first message, 2 h after the second
    assert await sleeps_prepared(db, tenant_id) == []

    await skipping.sleep(timedelta(hours=23))  # 25 h after the second
    prepared = await eventually(lambda: sleeps_prepared(db, tenant_id))
    assert len(prepared) == 1 and abs(prepared[0] - second) < timedelta(seconds=5)
