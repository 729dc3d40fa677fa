"""The providers' rules for a request, checked: every assembled request must be one a provider accepts.

Chat Completions: an assistant message's tool calls are answered, each exactly once, by the `tool` messages
directly after it, before any other message; a `tool` message answers a call of that assistant message.
Responses: every call item has exactly one output item after it with the same `call_id`, and every output
answers an earlier call. Both: known roles, unique call ids, unique tool names, a non-empty history.
Anthropic Messages: `engine.anthropic.messages_problems`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.anthropic import messages_problems
from engine.messages import CALL_OF_OUTPUT, CALL_OUTPUT_TYPES, request_shape

__all__ = ["problems"]

_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_RESPONSES_ROLES = frozenset({"system", "developer", "user", "assistant"})


def problems(request: Mapping[str, Any]) -> list[str]:
    """What a provider would reject in this request; empty when it is valid."""
    try:
        shape = request_shape(request)
    except ValueError as exc:
        return [str(exc)]
    if shape == "messages":
        return messages_problems(request)
    found = _chat(request) if shape == "chat_completions" else _responses(request)
    return found + _tools(request, shape)


def _chat(request: Mapping[str, Any]) -> list[str]:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    found: list[str] = []
    seen_ids: set[str] = set()
    open_calls: set[str] = set()  # calls of the last assistant message still waiting for their output
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            found.append(f"messages[{index}] is not an object")
            continue
        role = message.get("role")
        if role not in _CHAT_ROLES:
            found.append(f"messages[{index}] has unknown role {role!r}")
            continue
        if role == "tool":
            call = message.get("tool_call_id")
            if call not in open_calls:
                found.append(f"messages[{index}] answers {call!r}, which no preceding assistant call awaits")
            else:
                open_calls.discard(call)
            continue
        if open_calls:
            found.append(f"messages[{index}] comes before the outputs of {sorted(open_calls)}")
            open_calls = set()
        if role == "assistant":
            calls = message.get("tool_calls")
            if calls is None:
                continue
            if not isinstance(calls, list) or not calls:
                found.append(f"messages[{index}].tool_calls must be a non-empty list when present")
                continue
            for call in calls:
                call_id = call.get("id") if isinstance(call, Mapping) else None
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(call_id, str) or not call_id:
                    found.append(f"messages[{index}] has a tool call without an id")
                    continue
                if call_id in seen_ids:
                    found.append(f"tool call id {call_id!r} is used twice")
                if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                    found.append(f"tool call {call_id!r} has no function name")
                seen_ids.add(call_id)
                open_calls.add(call_id)
    if open_calls:
        found.append(f"tool calls {sorted(open_calls)} have no output")
    return found


def _responses(request: Mapping[str, Any]) -> list[str]:
    items = request.get("input")
    if isinstance(items, str):
        return []
    if not isinstance(items, list) or not items:
        return ["input must be a string or a non-empty list"]
    found: list[str] = []
    calls: dict[Any, str] = {}  # call_id -> its call type
    answered: set[Any] = set()
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            found.append(f"input[{index}] is not an object")
            continue
        kind = item.get("type")
        if kind in (None, "message"):
            if item.get("role") not in _RESPONSES_ROLES:
                found.append(f"input[{index}] has unknown role {item.get('role')!r}")
            continue
        call_id = item.get("call_id")
        if kind in CALL_OUTPUT_TYPES:
            if not isinstance(call_id, str) or not call_id:
                found.append(f"input[{index}] is a {kind} without a call_id")
            elif call_id in calls:
                found.append(f"call_id {call_id!r} is used twice")
            else:
                calls[call_id] = kind
        elif kind in CALL_OF_OUTPUT:
            if calls.get(call_id) != CALL_OF_OUTPUT[kind]:
                found.append(f"input[{index}] answers {call_id!r}, which no earlier {CALL_OF_OUTPUT[kind]} made")
            elif call_id in answered:
                found.append(f"call_id {call_id!r} is answered twice")
            else:
                answered.add(call_id)
    missing = sorted(set(calls) - answered)
    if missing:
        found.append(f"calls {missing} have no output")
    return found


def _tools(request: Mapping[str, Any], shape: str) -> list[str]:
    tools = request.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools must be a list"]
    found: list[str] = []
    names: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            found.append(f"tools[{index}] is not an object")
            continue
        if tool.get("type") != "function":
            continue  # built-in tools (web search and the like) have no name to clash
        source = tool.get("function") if shape == "chat_completions" else tool
        name = source.get("name") if isinstance(source, Mapping) else None
        if not isinstance(name, str) or not name:
            found.append(f"tools[{index}] has no name")
        elif name in names:
            found.append(f"tool name {name!r} is declared twice")
        else:
            names.add(name)
    return found
