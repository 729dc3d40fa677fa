"""A provider's streamed reply, passed on to the agent as it arrives with the note call held back.

Each filter takes the provider's events one at a time and says which to send now. Events that show the agent
nothing yet (a role-only first chunk, `response.created`) wait until something visible arrives, so a reply that
was only a note call can be dropped whole and answered by a second call: the agent sees one ordinary answer.
At the end, `reply()` is the whole reply as the non-streamed API would have returned it, note call and usage
included, for report.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME

__all__ = ["ChatStreamFilter", "ResponsesStreamFilter", "without_note_tool"]


def without_note_tool(response: dict[str, Any]) -> dict[str, Any]:
    """A Responses object echoes the request's tools: the agent never asked for `note`, so it does not see it."""
    tools = response.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and t.get("name") == NOTE_TOOL_NAME for t in tools):
        response = dict(response)
        response["tools"] = [t for t in tools if not (isinstance(t, dict) and t.get("name") == NOTE_TOOL_NAME)]
    return response


@dataclass
class _Choice:
    role: str = "assistant"
    content: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)  # upstream index -> assembled call
    visible_index: dict[int, int] = field(default_factory=dict)  # upstream index -> index the agent sees


@dataclass
class ChatStreamFilter:
    """Chat Completions chunks: note tool-call deltas dropped, other calls renumbered without a gap."""

    send_usage: bool = True  # the agent asked for `stream_options.include_usage` itself
    visible: bool = False
    held: list[dict[str, Any]] = field(default_factory=list)
    first: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    choices: dict[int, _Choice] = field(default_factory=dict)

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        if self.first is None:
            self.first = chunk
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        out = copy.deepcopy(chunk)
        shows = False
        for choice in out.get("choices") or []:
            shows |= self._choice(choice)
        if not out.get("choices") and chunk.get("usage") and not self.send_usage:
            return []  # the usage-only chunk Lethe asked for on its own account
        if not shows and not self._worth_sending(out):
            return []
        if shows and not self.visible:
            self.visible = True
            out_now, self.held = [*self.held, out], []
            return out_now
        if not self.visible:
            self.held.append(out)
            return []
        return [out]

    def _choice(self, choice: dict[str, Any]) -> bool:
        state = self.choices.setdefault(int(choice.get("index", 0)), _Choice())
        delta = choice.get("delta") or {}
        shows = False
        if delta.get("role"):
            state.role = delta["role"]
        if delta.get("content"):
            state.content = (state.content or "") + delta["content"]
            shows = True
        if delta.get("refusal"):
            state.refusal = (state.refusal or "") + delta["refusal"]
            shows = True
        kept = []
        for call in delta.get("tool_calls") or []:
            index = int(call.get("index", 0))
            whole = state.calls.setdefault(index, {"id": "", "type": "function",
                                                   "function": {"name": "", "arguments": ""}})
            function = call.get("function") or {}
            whole["id"] = call.get("id") or whole["id"]
            whole["function"]["name"] += function.get("name") or ""
            whole["function"]["arguments"] += function.get("arguments") or ""
            if whole["function"]["name"] == NOTE_TOOL_NAME:
                continue
            visible = state.visible_index.setdefault(index, len(state.visible_index))
            kept.append({**call, "index": visible})
            shows = True
        if "tool_calls" in delta:
            if kept:
                delta["tool_calls"] = kept
            else:
                del delta["tool_calls"]
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
            if choice["finish_reason"] == "tool_calls" and not state.visible_index:
                choice["finish_reason"] = "stop"  # the agent would wait for calls it cannot see
        return shows

    @staticmethod
    def _worth_sending(chunk: dict[str, Any]) -> bool:
        if chunk.get("usage"):
            return True
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if choice.get("finish_reason") or delta.get("role") or delta.get("content") is not None:
                return True
        return False

    def release(self) -> list[dict[str, Any]]:
        """What was held back, once the reply is to be shown as it is (nothing visible, nothing to continue)."""
        out, self.held = self.held, []
        return out

    def reply(self) -> dict[str, Any]:
        """The whole reply in the non-streamed shape (`chat.completion`), note calls included."""
        first = self.first or {}
        choices = []
        for index, state in sorted(self.choices.items()):
            message: dict[str, Any] = {"role": state.role, "content": state.content}
            if state.refusal is not None:
                message["refusal"] = state.refusal
            if state.calls:
                message["tool_calls"] = [call for _, call in sorted(state.calls.items())]
            choices.append({"index": index, "message": message, "finish_reason": state.finish_reason or "stop"})
        reply = {"id": first.get("id", ""), "object": "chat.completion", "created": first.get("created", 0),
                 "model": first.get("model", ""), "choices": choices or [
                     {"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]}
        if first.get("system_fingerprint"):
            reply["system_fingerprint"] = first["system_fingerprint"]
        if self.usage:
            reply["usage"] = self.usage
        return reply


_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


@dataclass
class ResponsesStreamFilter:
    """Responses events: the note item's events dropped, output indexes and sequence numbers without gaps."""

    visible: bool = False
    held: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None  # the `response` of the terminal event
    terminal: dict[str, Any] | None = None  # the terminal event, held until report has the reply
    note_items: set[str] = field(default_factory=set)
    note_indexes: set[int] = field(default_factory=set)
    visible_index: dict[int, int] = field(default_factory=dict)
    sequence: int = 0

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type", "")
        if kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") == "function_call" and item.get("name") == NOTE_TOOL_NAME:
                self.note_items.add(str(item.get("id")))
                self.note_indexes.add(int(event.get("output_index", -1)))
                return []
        if event.get("item_id") in self.note_items or event.get("output_index") in self.note_indexes:
            return []
        out = copy.deepcopy(event)
        if "output_index" in out:
            index = int(out["output_index"])
            out["output_index"] = self.visible_index.setdefault(index, len(self.visible_index))
        if isinstance(out.get("response"), dict):
            out["response"] = self._agent_response(out["response"])
        if kind in _TERMINAL:
            self.final = event.get("response") or {}
            self.terminal = out
            return []
        shows = kind == "response.output_item.added" and (out.get("item") or {}).get("type") != "reasoning"
        if shows and not self.visible:
            self.visible = True
            sent, self.held = [*self.held, out], []
            return [self._numbered(e) for e in sent]
        if not self.visible:
            self.held.append(out)
            return []
        return [self._numbered(out)]

    def _numbered(self, event: dict[str, Any]) -> dict[str, Any]:
        if "sequence_number" in event:
            event["sequence_number"] = self.sequence
            self.sequence += 1
        return event

    @staticmethod
    def _agent_response(response: dict[str, Any]) -> dict[str, Any]:
        response = without_note_tool(response)
        output = response.get("output")
        if isinstance(output, list):
            response = dict(response)
            response["output"] = [i for i in output if not (isinstance(i, dict) and i.get("type") == "function_call"
                                                            and i.get("name") == NOTE_TOOL_NAME)]
        return response

    def release(self) -> list[dict[str, Any]]:
        out, self.held = self.held, []
        return [self._numbered(e) for e in out]

    def finish(self) -> list[dict[str, Any]]:
        """The terminal event, once report has taken the reply."""
        return [self._numbered(self.terminal)] if self.terminal is not None else []

    @property
    def failed(self) -> bool:
        return self.terminal is None or self.terminal.get("type") == "response.failed"

    def reply(self) -> dict[str, Any]:
        """The whole reply as the terminal event carried it, note calls included."""
        return self.final or {"object": "response", "output": []}
