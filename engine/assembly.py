"""Request assembly for Chat Completions and Responses (and, through `engine.anthropic`, Anthropic Messages):
the agent's request, with Lethe's view of history.

Order: the agent's instructions, the facts block, the history in view (a `Block` of Lethe's may stand among
its items), and the note ask last with the `note` tool added. Lethe's blocks speak in the role of
the agent's instructions (`system`, or `developer` when those are developer messages; always `developer`
for Responses). Every other request field passes through unchanged. A final pass drops any call left
without its output and any output left without its call, so the result is always a request providers accept.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.anthropic import assemble_messages, repair_messages
from engine.blocks.note_ask import NOTE_TOOL_NAME, note_tool_chat, note_tool_responses
from engine.messages import CALL_OF_OUTPUT, CALL_OUTPUT_TYPES, Shape, instruction_items, request_shape

__all__ = ["Block", "assemble", "blocks_role", "repair_history"]



@dataclass(frozen=True)
class Block:
    """A text of Lethe's (facts block, note ask), placed among the history items."""

    text: str


def blocks_role(request: Mapping[str, Any]) -> str:
    """The role Lethe's blocks take: the agent's instructions' role; always developer for Responses."""
    if request_shape(request) == "responses":
        return "developer"
    instructions = instruction_items(request)
    return "developer" if instructions and instructions[0].get("role") == "developer" else "system"


def _block_item(text: str, shape: Shape, role: str) -> dict[str, Any]:
    if shape == "chat_completions":
        return {"role": role, "content": text}
    return {"type": "message", "role": role, "content": text}


def _has_tool(tools: Sequence[Mapping[str, Any]], shape: Shape) -> bool:
    for tool in tools:
        source = tool.get("function") if shape == "chat_completions" else tool
        if isinstance(source, Mapping) and source.get("name") == NOTE_TOOL_NAME:
            return True
    return False


def assemble(
    request: Mapping[str, Any],
    *,
    history: Sequence[Mapping[str, Any] | Block],
    facts_block: str | None = None,
    note_ask: str | None = None,
) -> dict[str, Any]:
    """The request the model will see. `history` is the view in order; a `Block` in it becomes a message of Lethe's."""
    shape = request_shape(request)
    if shape == "messages":
        # Anthropic takes instructions only in the top-level `system`: Lethe's blocks all go there, in order.
        texts = [*([facts_block] if facts_block else []), *(e.text for e in history if isinstance(e, Block))]
        return assemble_messages(request, history=[e for e in history if not isinstance(e, Block)],
                                 texts=texts, note_ask=note_ask)
    role = blocks_role(request)
    items: list[dict[str, Any]] = [copy.deepcopy(dict(m)) for m in instruction_items(request)]
    if facts_block:
        items.append(_block_item(facts_block, shape, role))
    # Shallow copies: nothing below edits a message in place (repair copies what it trims), and deep
    # copies of a long history were most of the cost of a decorate.
    body = [_block_item(entry.text, shape, role) if isinstance(entry, Block) else dict(entry) for entry in history]
    items += repair_history(body, shape)
    if note_ask:
        items.append(_block_item(note_ask, shape, role))
    assembled = {key: copy.deepcopy(value) for key, value in request.items()}
    assembled["messages" if shape == "chat_completions" else "input"] = items
    if note_ask:
        tools = list(assembled.get("tools") or [])
        if not _has_tool(tools, shape):
            tools.append(note_tool_chat() if shape == "chat_completions" else note_tool_responses())
        assembled["tools"] = tools
    return assembled


def repair_history(items: list[dict[str, Any]], shape: Shape) -> list[dict[str, Any]]:
    """Drop calls without outputs and outputs without calls, which providers refuse."""
    if shape == "messages":
        return repair_messages(items)
    return _repair_chat(items) if shape == "chat_completions" else _repair_responses(items)


def _repair_chat(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    seen: set[str] = set()
    index = 0
    while index < len(items):
        message = items[index]
        index += 1
        if message.get("role") == "tool":
            continue  # an output not directly after its call: its call is gone or elsewhere
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            result.append(message)
            continue
        block: list[dict[str, Any]] = []
        while index < len(items) and items[index].get("role") == "tool":
            block.append(items[index])
            index += 1
        answers: dict[str, dict[str, Any]] = {}
        for output in block:
            answers.setdefault(output.get("tool_call_id"), output)  # type: ignore[arg-type]
        kept = [c for c in calls if isinstance(c, Mapping) and c.get("id") in answers and c["id"] not in seen]
        seen.update(c["id"] for c in kept)
        trimmed = dict(message)
        if kept:
            trimmed["tool_calls"] = kept
        else:
            trimmed.pop("tool_calls", None)
            if not trimmed.get("content"):
                continue  # an assistant message with nothing left to say
        result.append(trimmed)
        result += [answers[c["id"]] for c in kept]
    return result


def _repair_responses(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    later_outputs: dict[tuple[Any, Any], int] = {}
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind in CALL_OF_OUTPUT:
            later_outputs[(CALL_OF_OUTPUT[kind], item.get("call_id"))] = index  # the last one wins
    kept_calls: set[Any] = set()
    answered: set[Any] = set()
    result: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        kind = item.get("type")
        call_id = item.get("call_id")
        if kind in CALL_OUTPUT_TYPES:
            output_at = later_outputs.get((kind, call_id))
            if call_id in kept_calls or output_at is None or output_at < index:
                continue
            kept_calls.add(call_id)
        elif kind in CALL_OF_OUTPUT:
            if call_id not in kept_calls or call_id in answered:
                continue
            answered.add(call_id)
        result.append(item)
    return result
