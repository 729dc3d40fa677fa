"""An Anthropic Messages stream, passed on to the agent as it arrives with the note call held back.

Events: `message_start`, then per content block `content_block_start`, `content_block_delta` (`text_delta`,
`input_json_delta`, `thinking_delta`, `signature_delta`, ...) and `content_block_stop`, then `message_delta`
(stop reason, usage) and `message_stop`; `ping` anywhere. The note block's events are dropped and the other
blocks renumbered without a gap. Until a text or tool_use block starts, nothing is sent (thinking alone shows
the agent nothing), so a reply that was only thinking and the note call can be dropped whole and answered by a
second call. `message_stop` waits until report has the reply; `reply()` is the reply as the non-streamed API
returns it, note call and usage included.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME

__all__ = ["MessagesStreamFilter"]

# Blocks that show the agent something; thinking alone does not.
_SHOWING = frozenset({"text", "tool_use", "server_tool_use"})


@dataclass
class _Block:
    start: dict[str, Any]
    text: str = ""
    partial_json: str = ""
    thinking: str = ""
    signature: str = ""
    citations: list[Any] = field(default_factory=list)

    def feed(self, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            self.text += str(delta.get("text", ""))
        elif kind == "input_json_delta":
            self.partial_json += str(delta.get("partial_json", ""))
        elif kind == "thinking_delta":
            self.thinking += str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            self.signature += str(delta.get("signature", ""))
        elif kind == "citations_delta":
            self.citations.append(delta.get("citation"))

    def whole(self) -> dict[str, Any]:
        block = copy.deepcopy(self.start)
        kind = block.get("type")
        if kind == "text":
            block["text"] = str(block.get("text") or "") + self.text
            if self.citations:
                block["citations"] = [*(block.get("citations") or []), *self.citations]
        elif kind in ("tool_use", "server_tool_use") and self.partial_json:
            try:
                block["input"] = json.loads(self.partial_json)
            except ValueError:
                block["input"] = self.partial_json  # kept as sent: report names the model's mistake
        elif kind == "thinking":
            block["thinking"] = str(block.get("thinking") or "") + self.thinking
            block["signature"] = str(block.get("signature") or "") + self.signature
        return block


@dataclass
class MessagesStreamFilter:
    visible: bool = False
    held: list[dict[str, Any]] = field(default_factory=list)
    message: dict[str, Any] | None = None
    blocks: dict[int, _Block] = field(default_factory=dict)
    note_indexes: set[int] = field(default_factory=set)
    visible_index: dict[int, int] = field(default_factory=dict)
    shown_calls: int = 0
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    terminal: dict[str, Any] | None = None

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type", "")
        index = event.get("index")
        if kind == "message_start":
            self.message = copy.deepcopy(event.get("message") or {})
            self.usage.update(self.message.get("usage") or {})
        elif kind == "content_block_start" and isinstance(index, int):
            block = event.get("content_block") or {}
            self.blocks[index] = _Block(dict(block))
            if block.get("type") == "tool_use" and block.get("name") == NOTE_TOOL_NAME:
                self.note_indexes.add(index)
                return []
        elif kind == "content_block_delta" and isinstance(index, int) and index in self.blocks:
            self.blocks[index].feed(event.get("delta") or {})
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            self.stop_reason = delta.get("stop_reason", self.stop_reason)
            self.stop_sequence = delta.get("stop_sequence", self.stop_sequence)
            self.usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.terminal = copy.deepcopy(event)
            return []
        if index in self.note_indexes:
            return []
        out = copy.deepcopy(event)
        if isinstance(index, int) and kind.startswith("content_block_"):
            out["index"] = self.visible_index.setdefault(index, len(self.visible_index))
        shows = False
        if kind == "content_block_start":
            block_kind = (out.get("content_block") or {}).get("type")
            shows = block_kind in _SHOWING
            self.shown_calls += block_kind == "tool_use"
        if kind == "message_delta" and (out.get("delta") or {}).get("stop_reason") == "tool_use" \
                and not self.shown_calls:
            out["delta"] = {**out["delta"], "stop_reason": "end_turn"}  # no call the agent can see
        if shows and not self.visible:
            self.visible = True
            sent, self.held = [*self.held, out], []
            return sent
        if not self.visible:
            self.held.append(out)
            return []
        return [out]

    def release(self) -> list[dict[str, Any]]:
        """What was held back, once the reply is to be shown as it is (nothing visible, nothing to continue)."""
        out, self.held = self.held, []
        return out

    def finish(self) -> list[dict[str, Any]]:
        """`message_stop`, once report has taken the reply."""
        return [self.terminal] if self.terminal is not None else []

    @property
    def complete(self) -> bool:
        return self.terminal is not None

    def reply(self) -> dict[str, Any]:
        """The whole reply in the non-streamed shape, note calls included."""
        message = copy.deepcopy(self.message or {})
        reply: dict[str, Any] = {"id": message.get("id", ""), "type": "message", "role": "assistant",
                                 "model": message.get("model", ""),
                                 "content": [block.whole() for _, block in sorted(self.blocks.items())],
                                 "stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence}
        if self.usage:
            reply["usage"] = dict(self.usage)
        return reply
