"""The provider's reply on report: finding the note call in it (or in a reply an agent hands decorate), and
handing the reply back without it, so an agent that never heard of `note` works unchanged (and no call without
an output enters history)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.anthropic import message_note_calls, without_note_blocks
from engine.blocks.note_ask import NOTE_TOOL_NAME, NoteEntry, NoteReading, read_note_arguments
from engine.messages import answered_call_ids

__all__ = [
    "NoteToolCall", "answer_places", "item_note_calls", "note_calls", "read_calls", "read_note", "without_note_calls",
]


@dataclass(frozen=True)
class NoteToolCall:
    """A note call as the model made it; the raw arguments are kept for inspection when malformed."""

    call_id: str
    arguments: str


def item_note_calls(item: Mapping[str, Any]) -> list[NoteToolCall]:
    """The calls to `note` one history item makes: a Chat assistant message's `tool_calls`, a Responses
    `function_call` item, or an Anthropic assistant message's `tool_use` blocks."""
    if item.get("type") == "function_call":
        if item.get("name") != NOTE_TOOL_NAME:
            return []
        return [NoteToolCall(str(item.get("call_id", "")), str(item.get("arguments", "")))]
    if item.get("role") not in (None, "assistant"):  # a reply's choice may leave its role out
        return []
    return [
        NoteToolCall(str(c.get("id", "")), str((c.get("function") or {}).get("arguments", "")))
        for c in item.get("tool_calls") or []
        if isinstance(c, Mapping) and (c.get("function") or {}).get("name") == NOTE_TOOL_NAME
    ] + [NoteToolCall(call_id, arguments) for call_id, arguments in message_note_calls(item)]


def note_calls(response: Mapping[str, Any]) -> list[NoteToolCall]:
    """Every call to `note` in a Chat Completions, Responses or Anthropic Messages reply."""
    if "choices" in response:
        items = [choice.get("message") or {} for choice in response.get("choices") or []]
    elif _is_message(response):
        items = [response]
    else:
        items = list(response.get("output") or [])
    return [call for item in items if isinstance(item, Mapping) for call in item_note_calls(item)]


def _is_message(response: Mapping[str, Any]) -> bool:
    """An Anthropic Messages reply: its content blocks at the top, no `choices`, no `output`."""
    return "content" in response and "choices" not in response and "output" not in response


def read_note(response: Mapping[str, Any]) -> NoteReading | None:
    """The facts of the reply's note call; None when it made none."""
    return read_calls(note_calls(response))


def read_calls(calls: Sequence[NoteToolCall]) -> NoteReading | None:
    """The facts of these note calls; None when there are none. Should a model split its facts over several
    calls, they are read together, and one malformed call rejects them all so nothing half-lands."""
    if not calls:
        return None
    entries: list[NoteEntry] = []
    for call in calls:
        reading = read_note_arguments(call.arguments)
        if not reading.taken:
            return reading
        entries += reading.entries
    return NoteReading(entries=tuple(entries))


def answer_places(items: Sequence[Mapping[str, Any]], call_ids: Sequence[str]) -> dict[str, int]:
    """For each of these note calls that no item answers, the index of the item its answer goes after: the
    call itself, or in Chat the last tool message directly after the call's message (a message's outputs
    stand together right after it)."""
    answered = {call for item in items for call in answered_call_ids(item)}
    places: dict[str, int] = {}
    for index, item in enumerate(items):
        for call in item_note_calls(item):
            if call.call_id not in call_ids or call.call_id in answered or call.call_id in places:
                continue
            place = index
            while item.get("type") is None and place + 1 < len(items) and items[place + 1].get("role") == "tool":
                place += 1
            places[call.call_id] = place
    return places


def without_note_calls(response: Mapping[str, Any]) -> dict[str, Any]:
    """The reply as the agent should see it: the note calls taken out, the rest untouched."""
    result = copy.deepcopy(dict(response))
    if _is_message(result):
        return without_note_blocks(result)
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
