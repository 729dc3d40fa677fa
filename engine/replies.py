"""The provider's reply on report: finding the note call in it, and handing the reply back without it, so an
agent that never heard of `note` works unchanged (and no call without an output enters history)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME, NoteEntry, NoteReading, read_note_arguments

__all__ = ["NoteToolCall", "note_calls", "read_note", "without_note_calls"]


@dataclass(frozen=True)
class NoteToolCall:
    """A note call as the model made it; the raw arguments are kept for inspection when malformed."""

    call_id: str
    arguments: str


def _chat_calls(response: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls: list[Mapping[str, Any]] = []
    for choice in response.get("choices") or []:
        message = choice.get("message") or {}
        calls += [c for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
    return calls


def note_calls(response: Mapping[str, Any]) -> list[NoteToolCall]:
    """Every call to `note` in a Chat Completions or Responses reply."""
    if "choices" in response:
        return [
            NoteToolCall(str(c.get("id", "")), str((c.get("function") or {}).get("arguments", "")))
            for c in _chat_calls(response)
            if (c.get("function") or {}).get("name") == NOTE_TOOL_NAME
        ]
    return [
        NoteToolCall(str(item.get("call_id", "")), str(item.get("arguments", "")))
        for item in response.get("output") or []
        if item.get("type") == "function_call" and item.get("name") == NOTE_TOOL_NAME
    ]


def read_note(response: Mapping[str, Any]) -> NoteReading | None:
    """The facts of the reply's note call; None when it made none. Should a model split its facts over
    several calls, they are read together, and one malformed call rejects them all so nothing half-lands."""
    calls = note_calls(response)
    if not calls:
        return None
    entries: list[NoteEntry] = []
    for call in calls:
        reading = read_note_arguments(call.arguments)
        if not reading.taken:
            return reading
        entries += reading.entries
    return NoteReading(entries=tuple(entries))


def without_note_calls(response: Mapping[str, Any]) -> dict[str, Any]:
    """The reply as the agent should see it: the note calls taken out, the rest untouched."""
    result = copy.deepcopy(dict(response))
    if "choices" in result:
        for choice in result["choices"]:
            message = choice.get("message") or {}
            calls = message.get("tool_calls")
            if not calls:
                continue
            kept = [c for c in calls if (c.get("function") or {}).get("name") != NOTE_TOOL_NAME]
            if kept:
                message["tool_calls"] = kept
                continue
            del message["tool_calls"]
            if message.get("content") is None:
                message["content"] = ""
            if choice.get("finish_reason") == "tool_calls":
                choice["finish_reason"] = "stop"  # the agent would otherwise wait for calls it cannot see
        return result
    result["output"] = [
        item
        for item in result.get("output") or []
        if not (item.get("type") == "function_call" and item.get("name") == NOTE_TOOL_NAME)
    ]
    return result
