"""Agents that know nothing of Lethe: the `openai` SDK, a transcript of their own, a `lookup` tool they answer.

Each speaks one shape and reads answers streamed or not, the way an agent product would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openai import AsyncOpenAI

CHAT_TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a ticket up.",
                                                "parameters": {"type": "object",
                                                               "properties": {"query": {"type": "string"}}}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "lookup", "description": "Look a ticket up.",
                    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]


@dataclass
class Reply:
    text: str
    calls: list[tuple[str, str, str]]  # id, name, arguments
    usage: dict[str, Any] | None = None


@dataclass
class ChatAgent:
    client: AsyncOpenAI
    transcript: list[dict[str, Any]] = field(default_factory=lambda: [
        {"role": "system", "content": "You help with tickets."}])
    replies: list[Reply] = field(default_factory=list)

    async def ask(self, text: str, *, stream: bool, **extra: Any) -> Reply:
        self.transcript.append({"role": "user", "content": text})
        for _ in range(5):
            reply = await (self._streamed(**extra) if stream else self._plain(**extra))
            self.replies.append(reply)
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if reply.calls:
                message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                         for i, n, a in reply.calls]
            self.transcript.append(message)
            if not reply.calls:
                return reply
            for call_id, _, arguments in reply.calls:
                query = json.loads(arguments).get("query", "")
                self.transcript.append({"role": "tool", "tool_call_id": call_id,
                                        "content": f"ticket {query}: open, owner Dana"})
        raise AssertionError("the tool loop did not end")

    async def _plain(self, **extra: Any) -> Reply:
        answer = await self.client.chat.completions.create(model="gpt-test", messages=self.transcript,  # type: ignore[arg-type]
                                                           tools=CHAT_TOOLS, **extra)  # type: ignore[arg-type]
        message = answer.choices[0].message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]  # type: ignore[union-attr]
        return Reply(message.content or "", calls, answer.usage.model_dump() if answer.usage else None)

    async def _streamed(self, **extra: Any) -> Reply:
        stream = await self.client.chat.completions.create(model="gpt-test", messages=self.transcript,  # type: ignore[arg-type]
                                                           tools=CHAT_TOOLS, stream=True, **extra)  # type: ignore[arg-type]
        text, calls, usage = "", {}, None
        async for chunk in stream:
            if chunk.usage:
                usage = chunk.usage.model_dump()
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    whole = calls.setdefault(call.index, ["", "", ""])
                    whole[0] = call.id or whole[0]
                    whole[1] += (call.function.name or "") if call.function else ""
                    whole[2] += (call.function.arguments or "") if call.function else ""
        assert sorted(calls) == list(range(len(calls))), f"tool call indexes with a gap: {sorted(calls)}"
        return Reply(text, [tuple(calls[i]) for i in sorted(calls)], usage)  # type: ignore[misc]


@dataclass
class ResponsesAgent:
    client: AsyncOpenAI
    transcript: list[dict[str, Any]] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

    async def ask(self, text: str, *, stream: bool) -> Reply:
        self.transcript.append({"role": "user", "content": text})
        for _ in range(5):
            output, usage = await (self._streamed() if stream else self._plain())
            self.transcript += output
            calls = [(i["call_id"], i["name"], i["arguments"]) for i in output if i["type"] == "function_call"]
            text_out = "".join(c["text"] for i in output if i["type"] == "message" for c in i["content"]
                               if c["type"] == "output_text")
            reply = Reply(text_out, calls, usage)
            self.replies.append(reply)
            if not calls:
                return reply
            for call_id, _, arguments in calls:
                query = json.loads(arguments).get("query", "")
                self.transcript.append({"type": "function_call_output", "call_id": call_id,
                                        "output": f"ticket {query}: open, owner Dana"})
        raise AssertionError("the tool loop did not end")

    async def _plain(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        answer = await self.client.responses.create(model="gpt-test", instructions="You help with tickets.",
                                                    input=self.transcript, tools=RESPONSES_TOOLS)  # type: ignore[arg-type]
        return ([i.model_dump(exclude_none=True) for i in answer.output],
                answer.usage.model_dump() if answer.usage else None)

    async def _streamed(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        stream = await self.client.responses.create(model="gpt-test", instructions="You help with tickets.",
                                                    input=self.transcript, tools=RESPONSES_TOOLS, stream=True)  # type: ignore[arg-type]
        done: list[dict[str, Any]] = []
        final = None
        async for event in stream:
            if event.type == "response.output_item.done":
                done.append(event.item.model_dump(exclude_none=True))
            if event.type == "response.completed":
                final = event.response
        assert final is not None, "the stream ended without response.completed"
        assert [i.model_dump(exclude_none=True) for i in final.output] == done
        return done, final.usage.model_dump() if final.usage else None
