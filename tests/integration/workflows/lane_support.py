"""Builders for lane tests: tenants, messages written as the hot path writes them, and reads of the lane's
results. Used where a test drives the workflow by signals (time skipping) rather than through the gateway."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import httpx
from sqlalchemy import func, select, text
from temporalio.client import Client

from engine.recognition import content_hash
from engine.sizing import estimate_tokens
from store.db import Database
from store.models import MessageRow, OutboxEventRow
from store.records import row_of
from store.repositories import memories, outbox, tenants
from tests.integration.conftest import ADMIN_TOKEN
from tests.support import eventually
from workflows.memory import EVENTS_SIGNAL, MemoryWorkflow, MemoryWorkflowInput, workflow_id


async def new_tenant(db: Database) -> str:
    async with db.session() as session, session.begin():
        return (await tenants.create_tenant(session, name="lane-" + uuid.uuid4().hex)).id


async def add_turn(db: Database, tenant_id: str, memory_id: str, *, at: datetime, user: str,
                   reply: str | None = None) -> int:
    """A user message (and a reply) with their event, as decorate and report commit them; returns the seq."""
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        row = row_of(memory)
        row.last_turn += 1
        row.last_user_message_at = at
        bodies: list[dict[str, Any]] = [{"role": "user", "content": user}]
        if reply is not None:
            bodies.append({"role": "assistant", "content": reply})
        for body in bodies:
            row.last_message_seq += 1
            session.add(MessageRow(memory_pk=memory.id, tenant_id=tenant_id, seq=row.last_message_seq,
                                   turn=row.last_turn, role=body["role"], content_hash=content_hash(body),
                                   body=body, at=at, tokens=estimate_tokens(body)))
        row.latest_at = at
        return outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="decorate", payload={})


async def signal(client: Client, tenant_id: str, memory_id: str, seq: int, task_queue: str) -> None:
    await client.start_workflow(
        MemoryWorkflow.run, MemoryWorkflowInput(tenant_id=tenant_id, memory_id=memory_id),
        id=workflow_id(tenant_id, memory_id), task_queue=task_queue,
        start_signal=EVENTS_SIGNAL, start_signal_args=[seq],
    )


async def unprocessed(db: Database, tenant_id: str) -> int:
    async with db.session() as session:
        return (await session.execute(
            select(func.count()).select_from(OutboxEventRow)
            .where(OutboxEventRow.tenant_id == tenant_id, OutboxEventRow.processed_at.is_(None)))).scalar_one()


async def scalar(db: Database, sql: str, **params: Any) -> Any:
    async with db.session() as session:
        return (await session.execute(text(sql), params)).scalar()


async def lane_idle(db: Database, tenant_id: str, timeout: float = 120) -> None:
    """Every event of the tenant processed and every fact in the graph."""
    async def idle() -> bool:
        left = await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND processed_at IS NULL",
                            t=tenant_id)
        pending = await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND integrated_at IS NULL",
                               t=tenant_id)
        return left == 0 and pending == 0
    await eventually(idle, timeout=timeout, every=0.3)


async def sleeps_prepared(db: Database, tenant_id: str) -> list[datetime]:
    async with db.session() as session:
        rows = await session.execute(text(
            "SELECT for_user_message_at FROM sleep_preparations WHERE tenant_id = :t ORDER BY 1"), {"t": tenant_id})
        return [r[0] for r in rows]


async def http_tenant(http: httpx.AsyncClient) -> tuple[str, str]:
    response = await http.post("/v1/admin/tenants", json={"name": f"lane-{uuid.uuid4().hex}"},
                               headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 201, response.text
    return response.json()["tenant_id"], response.json()["api_key"]
