"""A small agent for recall tests: it sends its own words, answers note asks with the notes the test hands it,
calls a tool when told to, and finds Lethe's blocks in what decorate returns."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from engine.blocks.recall_block import OPEN

Note = dict[str, Any]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def recall_blocks(request: dict[str, Any]) -> list[tuple[int, str]]:
    """(index, text) of every recall block in a decorated Chat Completions request."""
    return [(i, m["content"]) for i, m in enumerate(request["messages"])
            if m.get("role") == "system" and str(m.get("content", "")).startswith(OPEN)]


def facts_block(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"]
                     if m.get("role") == "system" and str(m.get("content", "")).startswith("Facts kept from"))


@dataclass
class Talk:
    http: httpx.AsyncClient
    key: str
    memory_id: str
    # Called at each note ask with the asked turns; returns the notes to write (empty: nothing worth keeping;
    # None: the model ignores the ask).
    notes: Callable[[list[int]], list[Note] | None] = lambda turns: []
    transcript: list[dict[str, Any]] = field(default_factory=list)
    decorations: list[dict[str, Any]] = field(default_factory=list)

    def _request(self) -> dict[str, Any]:
        return {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You run launches."},
                                                     *self.transcript],
                "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
                    "type": "object", "properties": {"q": {"type": "string"}}}}}]}

    async def decorate(self) -> dict[str, Any]:
        response = await self.http.post(f"/v1/memories/{self.memory_id}/decorate", json=self._request(),
                                        headers=auth(self.key))
        assert response.status_code == 200, response.text
        body = response.json()
        self.decorations.append(body)
        return body

    async def report(self, body: dict[str, Any], text: str, *, tool: bool = False) -> None:
        calls = []
        notes = self.notes(body["note_ask_turns"]) if body["note_ask_turns"] else None
        if notes is not None:
            notes = notes or [{"note": "", "subject": "", "object": "", "milestone": False}]
            calls.append({"id": f"call_note_{len(self.decorations)}", "type": "function",
                          "function": {"name": "note", "arguments": json.dumps({"notes": notes})}})
        if tool:
            calls.append({"id": f"call_lookup_{len(self.decorations)}", "type": "function",
                          "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}})
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        response = await self.http.post(f"/v1/memories/{self.memory_id}/report", headers=auth(self.key), json={
            "decorate_id": body["decorate_id"], "response": {"id": "chatcmpl-x", "object": "chat.completion",
                                                             "choices": [{"index": 0, "message": message,
                                                                          "finish_reason": "stop"}]}})
        assert response.status_code == 200, response.text
        kept = response.json()["response"]["choices"][0]["message"]
        self.transcript.append(kept)
        for call in kept.get("tool_calls") or []:
            self.transcript.append({"role": "tool", "tool_call_id": call["id"], "content": "lookup: nothing new"})

    async def turn(self, user: str, reply: str = "Noted.", *, tool: bool = False) -> dict[str, Any]:
        """One user message, decorated and answered; returns the decorate's answer."""
        self.transcript.append({"role": "user", "content": user})
        body = await self.decorate()
        await self.report(body, reply, tool=tool)
        return body


async def export_part(http: httpx.AsyncClient, key: str, memory_id: str, part: str) -> list[dict[str, Any]]:
    """One list of the memory's export (`recall_blocks`, `recall_walks`, ...)."""
    response = await http.get(f"/v1/memories/{memory_id}/export", headers=auth(key))
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()[part]
    return found
