"""A small agent of one person for the people layer's tests: its calls name the user (`X-Lethe-User`) and may
set the clock (`X-Lethe-Now`); it finds the recall block in what decorate returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
from sqlalchemy import text

from store.db import Database
from store.repositories import memories
from tests.integration.recall.talk import recall_blocks


@dataclass
class Person:
    http: httpx.AsyncClient
    key: str
    memory_id: str
    user: str | None
    transcript: list[dict[str, Any]] = field(default_factory=list)

    def _headers(self, at: datetime | None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.key}"}
        if self.user is not None:
            headers["X-Lethe-User"] = self.user
        if at is not None:
            headers["X-Lethe-Now"] = at.isoformat()
        return headers

    async def turn(self, user: str, reply: str = "Noted.", *, at: datetime | None = None) -> str | None:
        """One user message, decorated and answered; returns the recall block placed for it, if any."""
        self.transcript.append({"role": "user", "content": user})
        response = await self.http.post(
            f"/v1/memories/{self.memory_id}/decorate", headers=self._headers(at),
            json={"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You are a kind assistant."},
                                                        *self.transcript]})
        assert response.status_code == 200, response.text
        body = response.json()
        message = {"role": "assistant", "content": reply}
        answer = await self.http.post(
            f"/v1/memories/{self.memory_id}/report", headers=self._headers(at),
            json={"decorate_id": body["decorate_id"],
                  "response": {"id": "chatcmpl-x", "object": "chat.completion",
                               "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}})
        assert answer.status_code == 200, answer.text
        self.transcript.append(message)
        blocks = recall_blocks(body["request"])
        return blocks[-1][1] if blocks else None


async def bind_in_tables(db: Database, tenant_id: str, memory_id: str, user_id: str) -> int:
    """The binding X-Lethe-User makes, written to the tables (the user, its graph memory, the memory's user),
    creating the memory when it is new. Returns the graph memory's pk."""
    async with db.session() as session, session.begin():
        graph = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=f"~user:{user_id}")
        await session.execute(text("UPDATE memories SET kind = 'user_graph' WHERE id = :pk"), {"pk": graph.id})
        user_pk = (await session.execute(text(
            "INSERT INTO users (tenant_id, user_id, graph_memory_pk) VALUES (:t, :u, :g) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET graph_memory_pk = EXCLUDED.graph_memory_pk "
            "RETURNING id"), {"t": tenant_id, "u": user_id, "g": graph.id})).scalar_one()
        await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        await session.execute(text("UPDATE memories SET user_pk = :u WHERE tenant_id = :t AND memory_id = :m"),
                              {"u": user_pk, "t": tenant_id, "m": memory_id})
        return int(graph.id)


async def graph_passages(db: Database, tenant_id: str, user_id: str) -> list[tuple[str, datetime]]:
    """(origin memory id, date) of the passages in the user's graph."""
    async with db.session() as session:
        rows = await session.execute(text(
            "SELECT p.origin_memory_id, p.at FROM passages p JOIN memories m ON m.id = p.memory_pk "
            "WHERE m.tenant_id = :t AND m.memory_id = :g ORDER BY p.id"), {"t": tenant_id, "g": f"~user:{user_id}"})
        return [(m, at) for m, at in rows]
