"""A scripted agent and model for driving whole conversations through decorate and report over HTTP.

The model reads the decorated request the way a real one would: it answers the note ask (or ignores it, if
told to), calls a tool every few turns, and otherwise replies in text. Both request shapes are spoken.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from engine.request_rules import problems

TOPICS = ["pricing page", "checkout migration", "tax table", "legal review", "launch date", "QA rota",
          "refund line", "analytics events", "email campaign", "partner API"]


def _user_text(turn: int) -> str:
    topic = TOPICS[(turn // 7) % len(TOPICS)]
    return (f"Turn {turn}: about the {topic}, what changed since yesterday and who owns the next step? "
            f"Ticket LTH-{1000 + turn} has the details; keep the numbers exact: {turn * 17} units, "
            f"{turn % 9} blockers.")


@dataclass
class ScriptedModel:
    """Answers note asks when `answers_notes`, else ignores them; calls `lookup` on every third turn."""

    shape: str
    answers_notes: bool = True
    note_only_every: int = 4  # every n-th note answer is the note call alone
    notes_written: int = 0
    asks_seen: list[tuple[int, int]] = field(default_factory=list)
    busy_turns: set[int] = field(default_factory=set)

    def reply(self, request: dict[str, Any], turn: int, note_ask_turns: list[int] | None) -> dict[str, Any]:
        items = request["messages"] if self.shape == "chat_completions" else request["input"]
        last_history = [m for m in items if m.get("role") not in ("system", "developer")][-1]
        wants_tool = turn % 3 == 0 and (last_history.get("role") == "user")
        calls: list[tuple[str, str, str]] = []
        text = f"Answer for turn {turn}: the owner is Dana, {turn * 17} units, next review on day {turn % 28 + 1}."
        if note_ask_turns and not self.answers_notes and turn not in self.busy_turns:
            self.busy_turns.add(turn)
            wants_tool = True  # busy with its task: it calls a tool and ignores the ask
        if note_ask_turns and self.answers_notes:
            self.asks_seen.append((note_ask_turns[0], note_ask_turns[1]))
            first, last = note_ask_turns
            notes = [{"note": f"Turns {first}-{last} settled ticket LTH-{1000 + first} with {first * 17} units.",
                      "subject": f"ticket LTH-{1000 + first}", "object": f"{first * 17} units",
                      "milestone": first % 2 == 0}]
            calls.append((f"call_note_{turn}_{self.notes_written}", "note", json.dumps({"notes": notes})))
            self.notes_written += 1
            if self.notes_written % self.note_only_every == 0:
                text = ""
                wants_tool = False
        if wants_tool:
            calls.append((f"call_lookup_{turn}", "lookup", json.dumps({"ticket": f"LTH-{1000 + turn}"})))
        return self._response(text, calls)

    def _response(self, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        if self.shape == "chat_completions":
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [{"id": cid, "type": "function", "function": {"name": n, "arguments": a}}
                                         for cid, n, a in calls]
            return {"id": "chatcmpl-x", "object": "chat.completion", "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}
        output: list[dict[str, Any]] = []
        if text:
            output.append({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": text}]})
        output += [{"type": "function_call", "call_id": cid, "name": n, "arguments": a} for cid, n, a in calls]
        return {"id": "resp_x", "object": "response", "output": output}


@dataclass
class ScriptedAgent:
    """Keeps its own transcript, as an agent product does, and resends it whole on every decorate."""

    http: httpx.AsyncClient
    key: str
    memory_id: str
    model: ScriptedModel
    ceiling: int
    resend_whole: bool = True
    # Keep the empty reply a note-only answer leaves, or drop it (then each call needs its own key).
    keeps_empty_replies: bool = True
    transcript: list[dict[str, Any]] = field(default_factory=list)
    unsent: list[dict[str, Any]] = field(default_factory=list)
    decorations: list[dict[str, Any]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def shape(self) -> str:
        return self.model.shape

    def _request(self) -> dict[str, Any]:
        history = self.transcript if self.resend_whole else self.unsent
        if self.shape == "chat_completions":
            return {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You run launches."},
                                                         *history],
                    "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
                        "type": "object", "properties": {"ticket": {"type": "string"}}}}}]}
        return {"model": "gpt-4.1-mini", "instructions": "You run launches.", "input": list(history),
                "tools": [{"type": "function", "name": "lookup",
                           "parameters": {"type": "object", "properties": {"ticket": {"type": "string"}}}}]}

    def _add(self, message: dict[str, Any]) -> None:
        self.transcript.append(message)
        self.unsent.append(message)

    async def turn(self, turn: int, *, headers: dict[str, str] | None = None) -> None:
        user = {"role": "user", "content": _user_text(turn)}
        self._add(user)
        for attempt in range(6):
            call_headers = {"Authorization": f"Bearer {self.key}", **(headers or {})}
            if not self.keeps_empty_replies:
                call_headers["Idempotency-Key"] = f"{self.memory_id}-{turn}-{attempt}"
            decorated = await self.http.post(f"/v1/memories/{self.memory_id}/decorate", json=self._request(),
                                             headers=call_headers)
            assert decorated.status_code == 200, decorated.text
            body = decorated.json()
            self.unsent = []
            self.decorations.append(body)
            assert problems(body["request"]) == [], problems(body["request"])
            assert body["estimated_tokens"] <= self.ceiling, (turn, body["estimated_tokens"])
            reply = self.model.reply(body["request"], turn, body["note_ask_turns"])
            reported = await self.http.post(f"/v1/memories/{self.memory_id}/report", json={
                "decorate_id": body["decorate_id"], "response": reply},
                headers={"Authorization": f"Bearer {self.key}", **(headers or {})})
            assert reported.status_code == 200, reported.text
            answer = reported.json()
            if answer["needs_continuation"]:
                # The note was all the model said: call again, keeping the empty reply or not.
                if self.keeps_empty_replies:
                    self._take(answer["response"])
                continue
            calls = self._take(answer["response"])
            if not calls:
                return
            for call_id in calls:
                output = f"LTH ticket record for {call_id}: status open, owner Dana, {turn * 3} comments."
                self._add({"role": "tool", "tool_call_id": call_id, "content": output}
                          if self.shape == "chat_completions"
                          else {"type": "function_call_output", "call_id": call_id, "output": output})
        raise AssertionError(f"turn {turn} did not finish")

    async def until_asked(self, *, limit: int = 200) -> int:
        """Converse turn by turn until a decorate carries a note ask; returns the last turn number."""
        turn = 0
        while not any(d["note_ask_turns"] for d in self.decorations):
            turn += 1
            assert turn <= limit, "never asked for a note"
            await self.turn(turn)
        return turn

    def _take(self, response: dict[str, Any]) -> list[str]:
        """Append the reply to the transcript; return the ids of tool calls the agent must answer."""
        if self.shape == "chat_completions":
            message = response["choices"][0]["message"]
            self._add(message)
            return [c["id"] for c in message.get("tool_calls") or []]
        for item in response["output"]:
            self._add(item)
        return [i["call_id"] for i in response["output"] if i.get("type") == "function_call"]
