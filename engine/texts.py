"""Plain text of stored messages, for the judge: what a unit or an episode says, without the JSON around it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.messages import StoredMessage

__all__ = ["CONTEXT_UNITS", "UNIT_TEXT_CHARS", "item_text", "message_text", "messages_text", "unit_text"]

# What the judge reads of a unit to score it as a boundary: its opening says what it is about, and embedding
# cost grows with its length.
UNIT_TEXT_CHARS = 600
# The judge reads this many units either side of each one it scores: novelty against them marks a boundary.
CONTEXT_UNITS = 2


def _content_text(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "tool_use":  # Anthropic's calls and outputs are content blocks
            texts.append(f"{part.get('name')}({json.dumps(part.get('input'), ensure_ascii=False, default=str)})")
        elif part.get("type") == "tool_result":
            texts += _content_text(part.get("content"))
    return texts


def _body_text(body: Mapping[str, Any]) -> str:
    parts = _content_text(body.get("content"))
    for call in body.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            parts.append(f"{function.get('name')}({function.get('arguments')})")
    if isinstance(body.get("name"), str) and "arguments" in body:  # a Responses function call
        parts.append(f"{body['name']}({body['arguments']})")
    if isinstance(body.get("output"), str):
        parts.append(body["output"])
    text = "\n".join(p for p in parts if p)
    return text or json.dumps(body, ensure_ascii=False, default=str)


def item_text(body: Mapping[str, Any]) -> str:
    """A request item's own words (text, tool calls, tool output), without role or JSON."""
    return _body_text(body)


def message_text(message: StoredMessage) -> str:
    """One message as a `role: text` line: its words, tool calls and tool output, without the JSON."""
    role = message.body.get("role") or message.body.get("type") or "item"
    return f"{role}: {_body_text(message.body)}"


def messages_text(messages: Sequence[StoredMessage], *, limit: int = 4000) -> str:
    """The messages as `role: text` lines, cut at `limit` characters (the judge reads the start)."""
    lines, length = [], 0
    for message in messages:
        role = message.body.get("role") or message.body.get("type") or "item"
        lines.append(f"{role}: {_body_text(message.body)}")
        length += len(lines[-1]) + 1
        if length >= limit:
            break  # the rest would be cut anyway
    return "\n".join(lines)[:limit]


def unit_text(messages: Sequence[StoredMessage]) -> str:
    """A unit's messages as the judge reads them for boundary scores, the same in the lane and the hot path."""
    return messages_text(messages, limit=UNIT_TEXT_CHARS)
