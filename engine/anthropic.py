"""The Anthropic Messages shape: recognising a request, placing Lethe's blocks, keeping history valid, the note
tool, and the note call in a reply.

Anthropic puts instructions in the top-level `system`, never among `messages`, so every block of Lethe's (the
facts block, recall blocks, the note ask) goes there, after the agent's own system blocks, which stay first and
unchanged (their `cache_control` included). The prompt cache is a prefix (tools, then system, then messages):
the agent's tools and system stay a prefix it can cache; Lethe's blocks only ever follow them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME, note_tool_chat

__all__ = [
    "assemble_messages",
    "looks_like_messages",
    "message_note_calls",
    "messages_problems",
    "note_tool_messages",
    "repair_messages",
    "reply_message",
    "system_with",
    "without_note_blocks",
]

# Request fields only Anthropic's API takes (`top_k` is left out: OpenAI-compatible servers take it too).
_ANTHROPIC_FIELDS = frozenset({"system", "stop_sequences", "anthropic_version"})
# Roles and content parts only Chat Completions has: a request with one is never Anthropic's.
_CHAT_ROLES = frozenset({"system", "developer", "tool", "function"})
_CHAT_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
# Content block types only Anthropic's API has.
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document",
                               "server_tool_use", "web_search_tool_result", "search_result", "container_upload"})


def note_tool_messages() -> dict[str, Any]:
    """The `note` tool as an Anthropic tool, built from the one definition the OpenAI shapes use."""
    function = note_tool_chat()["function"]
    return {"name": function["name"], "description": function["description"],
            "input_schema": function["parameters"]}


def _label(value: Any) -> str | None:
    """A role or a block type as sent, when it is a string at all (validation names the field otherwise)."""
    return value if isinstance(value, str) else None


def looks_like_messages(body: Mapping[str, Any]) -> bool:
    """Whether a request with `messages` is Anthropic's: a field, tool or content block only Anthropic has, and
    nothing only Chat Completions has."""
    messages = body.get("messages")
    messages = [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
    if any(_label(m.get("role")) in _CHAT_ROLES or m.get("tool_calls") or any(
            isinstance(p, Mapping) and _label(p.get("type")) in _CHAT_PARTS for p in _as_blocks(m.get("content")))
           for m in messages):
        return False
    thinking = body.get("thinking")
    if any(key in body for key in _ANTHROPIC_FIELDS) or (isinstance(thinking, Mapping) and "budget_tokens" in thinking):
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, Mapping) and "input_schema" in t for t in tools):
        return True
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, Mapping):
                continue
            if _label(block.get("type")) in _ANTHROPIC_BLOCKS or (block.get("type") == "image" and "source" in block):
                return True
    return False


def system_with(system: Any, texts: Sequence[str]) -> Any:
    """The top-level `system` with Lethe's texts appended as text blocks of their own, the agent's first."""
    if not texts:
        return copy.deepcopy(system)
    own: list[Any]
    if isinstance(system, str):
        own = [{"type": "text", "text": system}] if system else []
    elif isinstance(system, list):
        own = copy.deepcopy(system)
    else:
        own = []
    return [*own, *({"type": "text", "text": text} for text in texts)]


def assemble_messages(request: Mapping[str, Any], *, history: Sequence[Mapping[str, Any]],
                      texts: Sequence[str], note_ask: str | None) -> dict[str, Any]:
    """The request the model sees: the agent's fields, the history in view, Lethe's texts in `system`."""
    # The history is replaced whole, so it is not copied: deep copies of a long one are a decorate's cost.
    assembled = {key: copy.deepcopy(value) for key, value in request.items() if key != "messages"}
    assembled["messages"] = repair_messages([dict(m) for m in history])
    placed = [*texts, *([note_ask] if note_ask else [])]
    if placed:
        assembled["system"] = system_with(request.get("system"), placed)
    if note_ask:
        tools = list(assembled.get("tools") or [])
        if not any(isinstance(t, Mapping) and t.get("name") == NOTE_TOOL_NAME for t in tools):
            tools.append(note_tool_messages())
        assembled["tools"] = tools
    return assembled


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _joined_users(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive user messages as one (Anthropic combines them anyway), tool results first: a note answer of
    Lethe's stands between a call and the agent's own results for that call's message."""
    result: list[dict[str, Any]] = []
    for message in messages:
        last = result[-1] if result else None
        if last is None or message.get("role") != "user" or last.get("role") != "user":
            result.append(message)
            continue
        blocks = [*_as_blocks(last.get("content")), *_as_blocks(message.get("content"))]
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        rest = [b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "tool_result")]
        result[-1] = {**last, "content": [*results, *rest]}
    return result


def _uses(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return [b.get("id") for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"] \
        if message.get("role") == "assistant" and isinstance(content, list) else []


def _results(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return [b.get("tool_use_id") for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"] \
        if message.get("role") == "user" and isinstance(content, list) else []


def _kept(message: dict[str, Any], kind: str, key: str, keep: set[Any]) -> dict[str, Any] | None:
    """The message with only the blocks of `kind` whose `key` is in `keep` (each once); None when nothing is left."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    kept, taken = [], set()
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == kind:
            if block.get(key) not in keep or block.get(key) in taken:
                continue
            taken.add(block.get(key))
        kept.append(block)
    if len(kept) == len(content):
        return message
    return {**message, "content": kept} if kept else None


def repair_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep only calls answered in the very next message and results answering the message just before, as
    Anthropic requires: a fade or a lost output must never make a request it refuses."""
    joined = _joined_users(messages)
    result: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for index, message in enumerate(joined):
        trimmed: dict[str, Any] | None = message
        uses = set(_uses(message))
        if uses:
            after = joined[index + 1] if index + 1 < len(joined) else {}
            answered = (uses & set(_results(after))) - seen
            trimmed = _kept(message, "tool_use", "id", answered)
            seen.update(answered)
        elif _results(message):
            before = result[-1] if result else {}
            trimmed = _kept(message, "tool_result", "tool_use_id", set(_uses(before)))
        if trimmed is not None:
            result.append(trimmed)
    # Dropping a message may have brought two user messages together.
    return _joined_users(result) if len(result) != len(joined) else result


def messages_problems(request: Mapping[str, Any]) -> list[str]:
    """What Anthropic's API would refuse in this request's history and tools; empty when it is valid."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    found: list[str] = []
    seen: set[Any] = set()
    open_calls: set[Any] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            found.append(f"messages[{index}] is not a user or assistant message")
            continue
        answers = _results(message)
        for call in answers:
            if call not in open_calls:
                found.append(f"messages[{index}] answers {call!r}, which the message before did not call")
            open_calls.discard(call)
        if open_calls:
            found.append(f"tool_use {sorted(map(str, open_calls))} not answered in messages[{index}]")
            open_calls = set()
        for call in _uses(message):
            if call in seen:
                found.append(f"tool_use id {call!r} is used twice")
            seen.add(call)
            open_calls.add(call)
    if open_calls:
        found.append(f"tool_use {sorted(map(str, open_calls))} have no result")
    names = [str(t.get("name")) for t in request.get("tools") or [] if isinstance(t, Mapping)]
    found += [f"tool name {name!r} is declared twice" for name in sorted({n for n in names if names.count(n) > 1})]
    system = request.get("system")
    if system is not None and not isinstance(system, str | list):
        found.append("system must be a string or a list of text blocks")
    return found


def reply_message(response: Mapping[str, Any]) -> dict[str, Any]:
    """What a Messages reply adds to history: an assistant message with its content blocks (the request takes
    no other field, so the reply's id, model and stop reason stay out)."""
    return {"role": "assistant", "content": copy.deepcopy(response.get("content"))}


def message_note_calls(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(id, arguments as JSON) of each note `tool_use` block in an assistant message or a Messages reply."""
    if item.get("role") not in (None, "assistant") or item.get("type") not in (None, "message"):
        return []
    content = item.get("content")
    return [(str(b.get("id", "")), b["input"] if isinstance(b.get("input"), str)
             else json.dumps(b.get("input"), ensure_ascii=False))
            for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"
            and b.get("name") == NOTE_TOOL_NAME] if isinstance(content, list) else []


def without_note_blocks(response: dict[str, Any]) -> dict[str, Any]:
    """A Messages reply as the agent sees it: note calls out, and no `tool_use` stop for calls it cannot see."""
    content = response.get("content")
    if not isinstance(content, list):
        return response
    kept = [b for b in content
            if not (isinstance(b, Mapping) and b.get("type") == "tool_use" and b.get("name") == NOTE_TOOL_NAME)]
    if len(kept) == len(content):
        return response
    response["content"] = kept
    if response.get("stop_reason") == "tool_use" and not any(
            isinstance(b, Mapping) and b.get("type") == "tool_use" for b in kept):
        response["stop_reason"] = "end_turn"  # the agent would otherwise run calls it cannot see
    return response
