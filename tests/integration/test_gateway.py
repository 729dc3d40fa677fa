"""The gateway over real HTTP, against the embedded Postgres and the Temporal dev server."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import func, select, update
from temporalio.client import Client

from service.housekeeping import Housekeeping
from service.tenant_keys import TenantKeys
from store.db import Database
from store.models import ApiKeyRow, IdempotencyRow, MemoryRow, MessageRow, OutboxEventRow
from store.repositories import tenants
from tests.support import eventually
from workflows.memory import MemoryWorkflow, workflow_id


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _chat(*contents: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for i, content in enumerate(contents):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": content})
    return {"model": "gpt-4o-mini", "temperature": 0.2, "messages": messages}


async def _rows(db: Database, model: type, tenant_id: str) -> int:
    async with db.session() as session:
        return (
            await session.execute(select(func.count()).select_from(model).where(model.tenant_id == tenant_id))
        ).scalar_one()


async def test_healthz_and_readyz_answer(http: httpx.AsyncClient) -> None:
    assert (await http.get("/healthz")).json() == {"status": "ok"}
    ready = await http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"postgres": "ok", "temporal": "ok"}


async def test_decorate_stores_messages_and_runs_the_lane(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, temporal_client: Client
) -> None:
    tenant_id, key = tenant
    body = _chat("Plan the launch.")
    response = await http.post("/v1/memories/launch-1/decorate", json=body, headers=_auth(key))

    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["decorate_id"].startswith("dec_")
    assert answer["request"] == body  # returned unchanged, unknown fields included
    assert await _rows(db, MessageRow, tenant_id) == 1  # the system prompt is not history

    async def processed() -> bool:
        async with db.session() as session:
            rows = (await session.execute(
                select(OutboxEventRow.processed_at).where(OutboxEventRow.tenant_id == tenant_id))).scalars().all()
        return bool(rows) and all(at is not None for at in rows)

    await eventually(processed)
    handle = temporal_client.get_workflow_handle(workflow_id(tenant_id, "launch-1"))

    async def acknowledged() -> bool:
        # The activity marks the event processed in Postgres a moment before the workflow hears it finished.
        return (await handle.query(MemoryWorkflow.lane)).done_seq == 1

    await eventually(acknowledged)

    async def listed() -> list[str]:
        return [w.id async for w in temporal_client.list_workflows(f'LetheTenant = "{tenant_id}"')]

    assert await eventually(listed) == [workflow_id(tenant_id, "launch-1")]


async def test_resend_and_delta_store_each_message_once(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    first = _chat("Hello", "Hi there", "What is the plan?")
    assert (await http.post("/v1/memories/m/decorate", json=first, headers=_auth(key))).status_code == 200
    resend = _chat("Hello", "Hi there", "What is the plan?", "Ship Friday.", "Who owns QA?")
    assert (await http.post("/v1/memories/m/decorate", json=resend, headers=_auth(key))).status_code == 200
    delta = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "And the budget?"}]}
    assert (await http.post("/v1/memories/m/decorate", json=delta, headers=_auth(key))).status_code == 200

    async with db.session() as session:
        rows = (await session.execute(
            select(MessageRow.seq, MessageRow.turn, MessageRow.role).where(MessageRow.tenant_id == tenant_id)
            .order_by(MessageRow.seq))).all()
    assert [tuple(r) for r in rows] == [
        (1, 1, "user"), (2, 1, "assistant"), (3, 2, "user"), (4, 2, "assistant"), (5, 3, "user"), (6, 4, "user"),
    ]


async def test_responses_request_and_report_store_the_reply(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    request = {"model": "gpt-4.1", "instructions": "Be brief.", "input": "Name three moons of Jupiter."}
    decorated = await http.post("/v1/memories/moons/decorate", json=request, headers=_auth(key))
    assert decorated.status_code == 200, decorated.text
    assert decorated.json()["shape"] == "responses"
    reply = {"id": "resp_1", "output": [{"type": "message", "role": "assistant",
                                          "content": [{"type": "output_text", "text": "Io, Europa, Ganymede."}]}]}
    reported = await http.post("/v1/memories/moons/report", headers=_auth(key),
                               json={"decorate_id": decorated.json()["decorate_id"], "response": reply})
    assert reported.status_code == 200, reported.text
    assert reported.json() == {"response": reply, "needs_continuation": False}
    assert await _rows(db, MessageRow, tenant_id) == 2
    assert await _rows(db, OutboxEventRow, tenant_id) == 2


async def test_other_tenant_gets_404_for_a_memory(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    _, key = tenant
    _, other_key = other_tenant
    assert (await http.post("/v1/memories/private/decorate", json=_chat("secret"), headers=_auth(key))).is_success
    assert (await http.get("/v1/memories/private", headers=_auth(key))).json()["messages"] == 1

    response = await http.get("/v1/memories/private", headers=_auth(other_key))
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found"
    missing = await http.get("/v1/memories/never-created", headers=_auth(key))
    assert missing.status_code == 404 and missing.json() == response.json() | {
        "error": response.json()["error"] | {"message": "no memory 'never-created'"}}


async def test_report_on_another_tenants_memory_is_404(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    decorated = await http.post("/v1/memories/mine/decorate", json=_chat("hi"), headers=_auth(tenant[1]))
    response = await http.post("/v1/memories/mine/report", headers=_auth(other_tenant[1]), json={
        "decorate_id": decorated.json()["decorate_id"],
        "response": {"choices": [{"message": {"role": "assistant", "content": "x"}}]}})
    assert response.status_code == 404


async def test_bad_body_is_422_naming_the_field_and_stores_nothing(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    bad = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "?"}]}
    response = await http.post("/v1/memories/bad/decorate", json=bad, headers=_auth(key))

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["type"] == "invalid_request" and error["field"] == "messages[1].role"
    assert await _rows(db, MessageRow, tenant_id) == 0
    assert await _rows(db, MemoryRow, tenant_id) == 0
    assert await _rows(db, OutboxEventRow, tenant_id) == 0


async def test_body_without_messages_or_input_names_messages(
    http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    response = await http.post("/v1/memories/bad/decorate", json={"model": "x"}, headers=_auth(tenant[1]))
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "messages"


async def test_invalid_memory_id_and_json_are_rejected(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    long_id = "m" * 129
    response = await http.post(f"/v1/memories/{long_id}/decorate", json=_chat("x"), headers=_auth(tenant[1]))
    assert response.status_code == 422 and response.json()["error"]["field"] == "memory_id"
    garbled = await http.post("/v1/memories/ok/decorate", content=b"{not json", headers=_auth(tenant[1]))
    assert garbled.status_code == 422 and garbled.json()["error"]["type"] == "invalid_request"


async def test_missing_or_unknown_key_is_401(http: httpx.AsyncClient) -> None:
    assert (await http.post("/v1/memories/x/decorate", json=_chat("x"))).status_code == 401
    unknown = await http.post("/v1/memories/x/decorate", json=_chat("x"), headers=_auth("lethe_" + uuid.uuid4().hex))
    assert unknown.status_code == 401
    assert unknown.json()["error"]["type"] == "unauthorized"


async def test_admin_endpoints_need_the_admin_token(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    response = await http.post("/v1/admin/tenants", json={"name": "sneaky"}, headers=_auth(tenant[1]))
    assert response.status_code == 401


async def test_report_with_unknown_decorate_id_is_422(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    await http.post("/v1/memories/r/decorate", json=_chat("x"), headers=_auth(tenant[1]))
    response = await http.post("/v1/memories/r/report", headers=_auth(tenant[1]), json={
        "decorate_id": "dec_nope", "response": {"choices": [{"message": {"role": "assistant", "content": "x"}}]}})
    assert response.status_code == 422 and response.json()["error"]["field"] == "decorate_id"


async def test_clock_override_never_goes_backwards(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    key = tenant[1]
    later = {**_auth(key), "X-Lethe-Now": "2030-01-02T00:00:00Z"}
    assert (await http.post("/v1/memories/c/decorate", json=_chat("x"), headers=later)).status_code == 200
    earlier = {**_auth(key), "X-Lethe-Now": "2030-01-01T00:00:00Z"}
    response = await http.post("/v1/memories/c/decorate", json=_chat("x", "y", "z"), headers=earlier)
    assert response.status_code == 422 and response.json()["error"]["field"] == "X-Lethe-Now"
    summary = (await http.get("/v1/memories/c", headers=_auth(key))).json()
    assert summary["messages"] == 1 and summary["last_user_message_at"].startswith("2030-01-02")


async def test_answers_carry_server_timing_and_metrics_count_them_by_route(
    http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    _, key = tenant
    answer = await http.post("/v1/memories/timed/decorate", headers={"Authorization": f"Bearer {key}"},
                             json={"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    assert answer.status_code == 200
    assert float(answer.headers["Server-Timing"].removeprefix("app;dur=")) > 0
    metrics = (await http.get("/metrics")).text
    # The route's template, never the memory id, is the label.
    assert 'route="/v1/memories/{memory_id}/decorate"' in metrics and "timed" not in metrics
    counted = [line for line in metrics.splitlines() if line.startswith("lethe_http_requests_total{")
               and 'route="/v1/memories/{memory_id}/decorate"' in line and 'status="200"' in line]
    assert counted and float(counted[0].rsplit(" ", 1)[1]) >= 1


async def test_a_revoked_key_stops_working_once_its_check_expires(db: Database) -> None:
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"revoked-{uuid.uuid4().hex[:8]}")
        issued = await tenants.issue_api_key(session, tenant_id=tenant.id)
    now = [0.0]
    keys = TenantKeys(db, ttl_seconds=5.0, clock=lambda: now[0])
    assert await keys.tenant_for(issued.api_key) == tenant.id
    assert await keys.tenant_for("lethe_unknown") is None
    async with db.session() as session, session.begin():
        await session.execute(update(ApiKeyRow).where(ApiKeyRow.tenant_id == tenant.id).values(revoked_at=func.now()))
    now[0] = 4.9  # still within its check: the gateway has not looked again
    assert await keys.tenant_for(issued.api_key) == tenant.id
    now[0] = 5.1
    assert await keys.tenant_for(issued.api_key) is None


async def test_answers_kept_for_retries_expire(http: httpx.AsyncClient, tenant: tuple[str, str], db: Database) -> None:
    _, key = tenant
    auth = {"Authorization": f"Bearer {key}", "Idempotency-Key": "kept-a-while"}
    body = {"model": "m", "messages": [{"role": "user", "content": "what ships Friday?"}]}
    first = await http.post("/v1/memories/expiring/decorate", headers=auth, json=body)
    assert (await http.post("/v1/memories/expiring/decorate", headers=auth, json=body)).json() == first.json()

    sweeper = Housekeeping(db, keep=timedelta(hours=24))
    await sweeper.sweep_once()  # nothing here is a day old: the answer stays
    async with db.session() as session:
        kept = (await session.execute(select(func.count()).select_from(IdempotencyRow).where(
            IdempotencyRow.memory_id == "expiring"))).scalar_one()
    assert kept == 1
    # A day and a bit later, the answer is gone: the same key is a new call (recognised, so nothing is stored).
    await sweeper.sweep_once(now=datetime.now(UTC) + timedelta(hours=25))
    async with db.session() as session:
        kept = (await session.execute(select(func.count()).select_from(IdempotencyRow).where(
            IdempotencyRow.memory_id == "expiring"))).scalar_one()
    assert kept == 0
    again = await http.post("/v1/memories/expiring/decorate", headers=auth, json=body)
    assert again.status_code == 200 and again.json()["decorate_id"] != first.json()["decorate_id"]
