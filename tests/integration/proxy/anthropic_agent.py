"""An agent on the `anthropic` SDK that knows nothing of Lethe: a transcript of its own, a `lookup` tool it
answers, a system prompt it caches, the reply's content blocks kept as the SDK returns them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from anthropic import AsyncAnthropic

from tests.integration.proxy.agents import Reply

MESSAGES_TOOLS = [{"name": "lookup", "description": "Look a ticket up.",
                   "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}]
SYSTEM = [{"type": "text", "text": "You help with tickets. Keep answers short and name the owner.",
           "cache_control": {"type": "ephemeral"}}]


@dataclass
class MessagesAgent:
    client: AsyncAnthropic
    transcript: list[dict[str, Any]] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    contents: list[list[dict[str, Any]]] = field(default_factory=list)

    async def ask(self, text: str, *, stream: bool, **extra: Any) -> Reply:
        self.transcript.append({"role": "user", "content": text})
        for _ in range(5):
            message = await (self._streamed(**extra) if stream else self._plain(**extra))
            content = [block.model_dump(exclude_none=True) for block in message.content]
            self.contents.append(content)
            calls = [(b["id"], b["name"], b["input"]) for b in content if b["type"] == "tool_use"]
            reply = Reply("".join(b["text"] for b in content if b["type"] == "text"), calls,
                          message.usage.model_dump())
            self.replies.append(reply)
            # As Anthropic's own examples do: the reply's content goes back as the SDK returned it.
            self.transcript.append({"role": "assistant", "content": message.content})
            if not calls:
                assert message.stop_reason == "end_turn", message.stop_reason
                return reply
            assert message.stop_reason == "tool_use"
            self.transcript.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": f"ticket {args.get('query')}: open, "
                                                                            "owner Dana"}
                for call_id, _, args in calls]})
        raise AssertionError("the tool loop did not end")

    async def _plain(self, **extra: Any) -> Any:
        return await self.client.messages.create(model="claude-test", max_tokens=1024, system=SYSTEM,  # type: ignore[arg-type]
                                                 messages=self.transcript, tools=MESSAGES_TOOLS, **extra)  # type: ignore[arg-type]

    async def _streamed(self, **extra: Any) -> Any:
        async with self.client.messages.stream(model="claude-test", max_tokens=1024, system=SYSTEM,  # type: ignore[arg-type]
                                               messages=self.transcript, tools=MESSAGES_TOOLS,  # type: ignore[arg-type]
                                               **extra) as stream:
            text = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
        assert text == "".join(b.text for b in final.content if b.type == "text")
        return final
