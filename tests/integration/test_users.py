"""A memory's user: bound by `X-Lethe-User` at the first call that names one, never changed by a later call
(a 409 that stores nothing), a bad id refused naming the header, and users kept apart by tenant."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from store.db import Database, system_scope
from store.models import MemoryRow, MessageRow
from store.models.users import UserRow

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "I keep a dog called Pretzel."}]}


def _headers(key: str, user: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **({"X-Lethe-User": user} if user else {})}


async def _messages(db: Database, tenant_id: str, memory_id: str) -> int:
    with system_scope():
        async with db.session() as session:
            return int((await session.execute(
                select(func.count()).select_from(MessageRow).join(MemoryRow, MemoryRow.id == MessageRow.memory_pk)
                .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == memory_id))).scalar_one())


async def _users(db: Database, user_id: str) -> list[tuple[Any, ...]]:
    with system_scope():
        async with db.session() as session:
            rows = await session.execute(
                select(UserRow.tenant_id, UserRow.id, MemoryRow.memory_id, MemoryRow.kind)
                .join(MemoryRow, MemoryRow.id == UserRow.graph_memory_pk).where(UserRow.user_id == user_id))
            return [tuple(r) for r in rows]


async def test_a_memory_keeps_the_first_user_named_and_refuses_another(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database,
) -> None:
    tenant_id, key = tenant
    first = await http.post("/v1/memories/owned/decorate", headers=_headers(key, "ana"), json=CHAT)
    assert first.status_code == 200, first.text
    # Later calls may leave the user out, or name the same one.
    again = await http.post("/v1/memories/owned/decorate", headers=_headers(key), json=CHAT)
    assert again.status_code == 200, again.text
    held = await _messages(db, tenant_id, "owned")

    other = {**CHAT, "messages": [*CHAT["messages"], {"role": "assistant", "content": "Noted."},
                                  {"role": "user", "content": "And a cat."}]}
    refused = await http.post("/v1/memories/owned/decorate", headers=_headers(key, "bruno"), json=other)
    assert refused.status_code == 409, refused.text
    assert "X-Lethe-User" in refused.text and "ana" in refused.text and "bruno" in refused.text
    assert await _messages(db, tenant_id, "owned") == held  # nothing stored
    report = await http.post("/v1/memories/owned/report", headers=_headers(key, "bruno"), json={
        "decorate_id": first.json()["decorate_id"],
        "response": {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted."}}]}})
    assert report.status_code == 409, report.text
    assert await _messages(db, tenant_id, "owned") == held

    # The user has a graph of its own, in a memory no API path can name.
    assert [(t, memory, kind) for t, _, memory, kind in await _users(db, "ana")] == [
        (tenant_id, "~user:ana", "user_graph")]
    listed = await http.get("/v1/memories", headers=_headers(key))
    assert "owned" in listed.text and "~user:" not in listed.text


async def test_a_bad_user_id_is_refused_naming_the_header(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database,
) -> None:
    tenant_id, key = tenant
    for bad in ("has space", "~user:x", "x" * 101):
        answer = await http.post("/v1/memories/badly-owned/decorate", headers=_headers(key, bad), json=CHAT)
        assert answer.status_code == 422, (bad, answer.text)
        assert "X-Lethe-User" in answer.text, answer.text
    assert await _messages(db, tenant_id, "badly-owned") == 0


async def test_one_user_id_in_two_tenants_is_two_users(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str], db: Database,
) -> None:
    for _, key in (tenant, other_tenant):
        answer = await http.post("/v1/memories/shared-name/decorate", headers=_headers(key, "carla"), json=CHAT)
        assert answer.status_code == 200, answer.text
    users = await _users(db, "carla")
    assert {t for t, *_ in users} >= {tenant[0], other_tenant[0]}
    mine = [u for u in users if u[0] in (tenant[0], other_tenant[0])]
    assert len({pk for _, pk, _, _ in mine}) == 2  # two users, two graphs


async def test_the_clients_user_argument_binds_the_memory(gateway: str, tenant: tuple[str, str], db: Database) -> None:
    from lethe.client import AsyncLethe, LetheAPIError

    async with AsyncLethe(gateway, tenant[1]) as lethe:
        decorated = await lethe.decorate("client-owned", CHAT, user="dora")
        await lethe.report("client-owned", decorated.decorate_id, {"choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Noted."}}]}, user="dora")
        try:
            await lethe.decorate("client-owned", CHAT, user="emil")
        except LetheAPIError as refused:
            assert refused.status == 409
        else:
            raise AssertionError("another user was accepted")
    assert [memory for t, _, memory, _ in await _users(db, "dora") if t == tenant[0]] == ["~user:dora"]
