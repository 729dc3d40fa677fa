"""The LoCoMo bench's players: Lethe on the stack with a faithful note-taker, and the agent's own window alone
and with mem0's top 10 beside it. Each answers a question with the request the model would get and which of the
question's evidence turns are in it."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from locomo_data import Chat, LocomoTurn, Question, normalised, shown
from recall_scoring import RECALL_HEAD, current_recall_block, request_texts

__all__ = ["LethePlayer", "ModelNoteTaker", "WindowPlayer"]

MEM0_TOP = 10
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def _now(at: datetime) -> dict[str, str]:
    return {"X-Lethe-Now": at.strftime("%Y-%m-%dT%H:%M:%SZ")}


def _messages(request: dict[str, Any]) -> list[Any]:
    return request.get("messages") or request.get("input") or []


def _found(messages: list[Any], chat: Chat, question: Question) -> list[bool]:
    text = normalised(request_texts(messages))
    return [shown(text, chat.texts[e]) for e in question.evidence]


class ModelNoteTaker:
    """A model as the note-taker: the decorated request sent to an OpenAI-compatible endpoint (the `openai`
    client's own OPENAI_BASE_URL and OPENAI_API_KEY), the note tool required; its notes, as it wrote them."""

    def __init__(self, model: str) -> None:
        import openai

        self.model, self.client = model, openai.OpenAI()

    def notes(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        body = {**request, "model": self.model, "tool_choice": {"type": "function", "function": {"name": "note"}}}
        response = self.client.chat.completions.create(**body)
        for call in response.choices[0].message.tool_calls or []:
            if call.function.name == "note":
                return list(json.loads(call.function.arguments).get("notes") or [])
        return [{"note": "", "subject": "", "object": "", "milestone": False}]


class LethePlayer:
    """One chat as one memory: its turns played, its note asks answered verbatim, its questions asked."""

    def __init__(self, client: httpx.Client, chat: Chat, database_url: str, model: str, counter: Any,
                 note_taker: ModelNoteTaker | None = None) -> None:
        self.client, self.chat, self.database_url, self.note_taker = client, chat, database_url, note_taker
        self.model, self.counter = model, counter
        self.memory = f"locomo-{chat.number}-{secrets.token_hex(3)}"
        self.noted = 0  # the last turn noted
        self.note_asks = 0
        self.blocks_placed = 0
        self.last_request: list[Any] = []
        self.asked = 0
        self.answers: list[dict[str, Any]] = []  # each question's evidence, what was found and the block

    def _decorate(self, text: str, at: datetime, before: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        messages = [*(before or []), {"role": "user", "content": text}]
        response = self.client.post(f"/v1/memories/{self.memory}/decorate", headers=_now(at),
                                    json={"model": self.model, "messages": messages})
        response.raise_for_status()
        return response.json()

    def _report(self, answer: dict[str, Any], content: str, at: datetime) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if answer.get("note_ask_turns"):
            self.note_asks += 1
            notes = self.note_taker.notes(answer["request"]) if self.note_taker is not None else \
                self._notes(answer["note_ask_turns"][1])
            message["tool_calls"] = [{"id": f"call_note_{secrets.token_hex(4)}", "type": "function",
                                      "function": {"name": "note", "arguments": json.dumps({"notes": notes})}}]
        response = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 40}}
        self.client.post(f"/v1/memories/{self.memory}/report", headers=_now(at),
                         json={"decorate_id": answer["decorate_id"], "response": response}).raise_for_status()

    def _notes(self, last: int) -> list[dict[str, Any]]:
        """Every turn not yet noted up to `last`: each message verbatim and dated, its speaker the subject."""
        notes = []
        for turn in self.chat.turns[self.noted:last]:
            day = f"{turn.at.day} {turn.at:%B %Y}"
            for speaker, _, text in turn.said:
                words = _WORD.findall(text)
                notes.append({"note": f"On {day} {speaker} said: {text}", "subject": speaker,
                              "object": max(words, key=len) if words else "conversation", "milestone": False})
        self.noted = max(self.noted, last)
        return notes or [{"note": "", "subject": "", "object": "", "milestone": False}]

    def play(self, turn: LocomoTurn) -> None:
        answer = self._decorate(turn.user, turn.at)
        self._report(answer, turn.reply, turn.at)

    def ask(self, question: Question, *, reply: bool) -> tuple[list[bool], int]:
        """The question sent alone after the chat: with the chat's last reply before it, as an agent resends its
        recent history, so each question replaces the one before (none is answered). With `reply`, each is
        answered and joins the history."""
        at = self.chat.asked_at
        last = self.chat.turns[-1]
        before = [] if reply else [{"role": "assistant", "content": last.reply}]
        answer = self._decorate(question.text, at, before)
        messages = _messages(answer["request"])
        self.last_request = messages
        self.blocks_placed += current_recall_block(messages) is not None
        if reply:
            self._report(answer, "I'm not sure; tell me more.", at)
        self.asked += 1
        found = _found(messages, self.chat, question)
        self.answers.append({"question": question.text, "category": question.category, "found": found,
                             "evidence": [self.chat.texts[e] for e in question.evidence],
                             "block": current_recall_block(messages)})
        return found, self.counter.count_request(answer["request"])

    def earlier_recall_share(self) -> float | None:
        """Of the last request's tokens, the share in recall blocks placed for earlier messages."""
        if not self.last_request:
            return None
        current = current_recall_block(self.last_request)
        earlier = [m for m in self.last_request if isinstance(m, dict) and m.get("role") in ("system", "developer")
                   and isinstance(m.get("content"), str) and RECALL_HEAD in m["content"]
                   and (current is None or current not in m["content"])]
        total = self.counter.count_request({"model": self.model, "messages": self.last_request})
        return round(sum(self.counter.count_text(m["content"]) for m in earlier) / total, 3) if total else None

    def retired_examples(self, count: int = 8) -> list[dict[str, str]]:
        """A few retired facts beside the fact that retired each: what the judge called a contradiction."""
        facts = self.client.get(f"/v1/memories/{self.memory}/facts").raise_for_status().json()["facts"]
        by_key = {f[k]: f for f in facts for k in ("key", "fact_key", "id") if f.get(k) is not None}
        out = []
        for fact in facts:
            newer = by_key.get(fact.get("retired_by"))
            if fact.get("retired_at") and newer is not None:
                out.append({"old": fact["note"][:160], "new": newer["note"][:160]})
        return out[:count]

    def dump(self, folder: Path) -> None:
        """The last question's request and every fact, for reading a run's misses."""
        folder.mkdir(parents=True, exist_ok=True)
        facts = self.client.get(f"/v1/memories/{self.memory}/facts").raise_for_status().json()["facts"]
        dumped = {"last_request": self.last_request, "answers": self.answers, "facts": facts, "state": self.state()}
        (folder / f"{self.chat.number}.json").write_text(json.dumps(dumped, indent=1, default=str))

    def state(self) -> dict[str, Any]:
        return self.client.get(f"/v1/memories/{self.memory}").raise_for_status().json()

    def wait_for_lane(self, timeout: float) -> float:
        """Until every event of the memory is processed and every fact integrated, or `timeout`."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            facts = self.client.get(f"/v1/memories/{self.memory}/facts").raise_for_status().json()["facts"]
            if all(f.get("integrated_at") for f in facts) and asyncio.run(self._unprocessed()) == 0:
                break
            time.sleep(0.5)
        return time.monotonic() - started

    async def _unprocessed(self) -> int:
        connection = await asyncpg.connect(self.database_url)
        try:
            return int(await connection.fetchval(
                "SELECT count(*) FROM outbox o JOIN memories m ON m.id = o.memory_pk "
                "WHERE m.memory_id = $1 AND o.processed_at IS NULL", self.memory))
        finally:
            await connection.close()


class WindowPlayer:
    """The agent without Lethe: its newest `window` tokens, alone and with mem0's top 10 for the question."""

    def __init__(self, chat: Chat, counter: Any, model: str, window: int, peer: Any) -> None:
        self.chat, self.counter, self.model, self.window, self.peer = chat, counter, model, window, peer
        self.user_id = f"locomo-{chat.number}-{secrets.token_hex(3)}"
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self._empty = counter.count_request({"model": model, "messages": []})

    def add(self, turn: LocomoTurn) -> None:
        new = [{"role": "user", "content": turn.user}] + \
            ([{"role": "assistant", "content": turn.reply}] if turn.reply else [])
        self.messages += new
        self.tokens += [self.counter.count_request({"model": self.model, "messages": [m]}) - self._empty
                        for m in new]
        if self.peer is not None:
            self.peer.add(self.user_id, new)

    def _newest(self) -> list[dict[str, Any]]:
        kept, used = 0, 0
        for size in reversed(self.tokens):
            if used + size > self.window:
                break
            used, kept = used + size, kept + 1
        return self.messages[len(self.messages) - kept:] if kept else []

    def ask(self, question: Question) -> dict[str, tuple[list[bool], int]]:
        asked = {"role": "user", "content": question.text}
        requests = {"window": [*self._newest(), asked]}
        if self.peer is not None:
            found = self.peer.search(self.user_id, question.text, limit=MEM0_TOP)
            head = {"role": "system", "content": "Earlier messages that may be relevant:\n" + "\n".join(found)}
            requests["window+mem0"] = [head, *self._newest(), asked]
        return {name: (_found(messages, self.chat, question),
                       self.counter.count_request({"model": self.model, "messages": messages}))
                for name, messages in requests.items()}
