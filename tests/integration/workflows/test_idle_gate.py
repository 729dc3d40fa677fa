"""The idle gate under time skipping (issue #37): a conversation of a user that goes quiet for the idle period
hands its turns to the user's graph as passages, once, with the conversation's id and date; a conversation
with no user is left alone."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
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
from store.repositories import memories
from tests.integration.workflows.lane_support import add_turn, new_tenant, signal, unprocessed
from tests.integration.workflows.recorded import record_histories
from tests.support import DEV_SERVER_STARTUP, eventually, fresh_database
from workflows import search_attributes as sa
from workflows.memory import workflow_id

TALK = "I moved to Lisbon last spring and I keep a sourdough starter called Bruno on the kitchen shelf."


@pytest.fixture(scope="module")
async def skipping() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=lethe_data_converter, test_server_startup_timeout=DEV_SERVER_STARTUP,
    )
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
    task_queue = "idle-" + uuid.uuid4().hex[:8]
    worker: Worker = build_worker(skipping.client, db, task_queue=task_queue)
    async with worker:
        yield task_queue


async def bind_user(db: Database, tenant_id: str, memory_id: str, user_id: str) -> int:
    """The binding as X-Lethe-User makes it, written to the tables: the user, its graph memory, the memory's
    user. Returns the graph memory's pk."""
    async with db.session() as session, session.begin():
        graph = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=f"~user:{user_id}")
        await session.execute(text("UPDATE memories SET kind = 'user_graph' WHERE id = :pk"), {"pk": graph.id})
        user_pk = (await session.execute(text(
            "INSERT INTO users (tenant_id, user_id, graph_memory_pk) VALUES (:t, :u, :g) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET graph_memory_pk = EXCLUDED.graph_memory_pk "
            "RETURNING id"), {"t": tenant_id, "u": user_id, "g": graph.id})).scalar_one()
        await session.execute(text("UPDATE memories SET user_pk = :u WHERE tenant_id = :t AND memory_id = :m"),
                              {"u": user_pk, "t": tenant_id, "m": memory_id})
        return int(graph.id)


async def _turn(env: WorkflowEnvironment, db: Database, tenant_id: str, memory_id: str, task_queue: str,
                n: int) -> datetime:
    at = await env.get_current_time()
    seq = await add_turn(db, tenant_id, memory_id, at=at, user=f"{n}: {TALK}", reply=f"Noted {n}.")
    await signal(env.client, tenant_id, memory_id, seq, task_queue)
    await eventually(lambda: _processed(db, tenant_id))
    return at


async def _processed(db: Database, tenant_id: str) -> bool:
    return await unprocessed(db, tenant_id) == 0


async def _graph_passages(db: Database, graph_pk: int) -> list[tuple[str, datetime, int]]:
    async with db.session() as session:
        rows = await session.execute(text(
            "SELECT origin_memory_id, at, last_seq FROM passages WHERE memory_pk = :g ORDER BY id"), {"g": graph_pk})
        return [(m, at, seq) for m, at, seq in rows]


async def _idle_through(db: Database, tenant_id: str, memory_id: str) -> int:
    async with db.session() as session:
        return int((await session.execute(text(
            "SELECT idle_through_seq FROM memories WHERE tenant_id = :t AND memory_id = :m"),
            {"t": tenant_id, "m": memory_id})).scalar_one())


async def test_a_quiet_conversation_hands_its_turns_to_the_users_graph_once(
    skipping: WorkflowEnvironment, skipping_worker: str, db: Database
) -> None:
    tenant_id = await new_tenant(db)
    await _turn(skipping, db, tenant_id, "a", skipping_worker, 0)
    graph_pk = await bind_user(db, tenant_id, "a", "u1")
    await skipping.sleep(timedelta(minutes=5))
    last = await _turn(skipping, db, tenant_id, "a", skipping_worker, 1)
    await skipping.sleep(timedelta(minutes=20))  # 25 minutes after the first message, 20 after the last
    assert await _graph_passages(db, graph_pk) == []

    await skipping.sleep(timedelta(minutes=15))  # 35 minutes after the last user message
    passages = await eventually(lambda: _graph_passages(db, graph_pk))
    assert {m for m, _, _ in passages} == {"a"}
    assert all(abs(at - last) < timedelta(seconds=5) for _, at, _ in passages)
    assert await _idle_through(db, tenant_id, "a") == 4 == max(seq for _, _, seq in passages)

    await skipping.sleep(timedelta(hours=3))  # quiet on: the gate does not run again for the same turns
    assert await _graph_passages(db, graph_pk) == passages
    handle = skipping.client.get_workflow_handle(workflow_id(tenant_id, "a"))
    await record_histories(skipping.client, [await handle.describe()], "idle_gate")


async def test_a_conversation_without_a_user_is_left_alone(
    skipping: WorkflowEnvironment, skipping_worker: str, db: Database
) -> None:
    tenant_id = await new_tenant(db)
    await _turn(skipping, db, tenant_id, "solo", skipping_worker, 0)
    await skipping.sleep(timedelta(hours=1))
    assert await _idle_through(db, tenant_id, "solo") == 0
    async with db.session() as session:
        count = (await session.execute(text("SELECT count(*) FROM passages WHERE tenant_id = :t"),
                                       {"t": tenant_id})).scalar_one()
    assert count == 0
