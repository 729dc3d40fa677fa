"""A memory erased while Temporal was away keeps its workflow (nobody could end it). When a memory of the same name
is created again, its event numbers start over: its lane must start over with them, not wait for numbers past
the erased memory's; on the real gateway, Temporal dev server and Postgres."""

from __future__ import annotations

import httpx
from temporalio.client import Client, WorkflowExecutionStatus

from contracts.lane_names import workflow_id
from store.db import Database
from store.repositories import memories
from tests.integration.workflows.lane_support import lane_idle, scalar
from tests.integration.workflows.recorded import record_histories
from tests.support import memory_with_a_turn
from workflows.memory import MemoryWorkflow

MEMORY = "reborn"


async def test_a_memory_created_again_after_an_unended_erase_has_its_lane_run(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, temporal_client: Client
) -> None:
    tenant_id, key = tenant
    for text in ("We plan the launch.", "The venue is booked.", "Dana owns the checkout."):
        await memory_with_a_turn(http, key, MEMORY, user=text)  # three turns: events 1 to 6
    await lane_idle(db, tenant_id)
    handle = temporal_client.get_workflow_handle(workflow_id(tenant_id, MEMORY))
    before = await handle.query(MemoryWorkflow.lane)
    assert before.done_seq == 6

    # Erased in Postgres alone, as DELETE does when Temporal is away: the workflow keeps running.
    async with db.session() as session, session.begin():
        await memories.erase_memory(session, tenant_id=tenant_id, memory_id=MEMORY)
    await memory_with_a_turn(http, key, MEMORY, user="Starting over: what do we know?")  # events 1 and 2 again

    await lane_idle(db, tenant_id, timeout=60)  # every event of the new memory processed
    new_pk = await scalar(db, "SELECT id FROM memories WHERE tenant_id = :t AND memory_id = :m", t=tenant_id,
                          m=MEMORY)
    after = await handle.query(MemoryWorkflow.lane)
    assert (after.memory_pk, after.done_seq) == (new_pk, 2)
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    runs = [w async for w in temporal_client.list_workflows(f'WorkflowId = "{workflow_id(tenant_id, MEMORY)}"')]
    await record_histories(temporal_client, runs, "reborn")
