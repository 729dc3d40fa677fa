"""Messages as the providers take them: plain dicts, kept verbatim, classified without being changed.

Chat Completions history is a list of `messages` with a `role`; Responses history is a list of `input` items,
some with a `type` (`function_call`, `function_call_output`, `reasoning`, ...) and messages with a `role`;
Anthropic Messages history is a list of `messages` (user or assistant) whose content blocks carry the calls
(`tool_use`) and their outputs (`tool_result`, in a user message). The same classification serves all three,
so units and validity read one vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

__all__ = [
    "CALL_OF_OUTPUT",
    "CALL_OUTPUT_TYPES",
    "Classified",
    "ItemKind",
    "MessagesRequest",
    "Shape",
    "StoredMessage",
    "answered_call_id",
    "answered_call_ids",
    "call_ids",
    "history_items",
    "instruction_items",
    "item_kind",
    "request_shape",
]

Shape = Literal["chat_completions", "responses", "messages"]
# user: a user message; step: what the assistant produced (text, reasoning, tool calls);
# output: a tool's answer to a call; instruction: a system or developer message; other: anything else.
ItemKind = Literal["user", "step", "output", "instruction", "other"]

# Responses items that the client must answer, and the item type that answers each.
CALL_OUTPUT_TYPES: Mapping[str, str] = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
}
_OUTPUT_TYPES = frozenset(CALL_OUTPUT_TYPES.values())
# The call type each output type answers (the reverse of CALL_OUTPUT_TYPES).
CALL_OF_OUTPUT: Mapping[str, str] = {output: call for call, output in CALL_OUTPUT_TYPES.items()}
# Items the model emits that need no answer from the client (server-side tools, reasoning).
_STEP_TYPES = frozenset(
    {"reasoning", "web_search_call", "file_search_call", "image_generation_call", "code_interpreter_call"}
)


class MessagesRequest(dict[str, Any]):
    """An Anthropic Messages request body. It carries `messages` as Chat Completions does, so its shape is
    marked by its type (chosen where the request comes in) rather than guessed from its keys."""


def _blocks(item: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    """The content blocks of one type in an Anthropic message (none for a string or another shape's content)."""
    content = item.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping) and block.get("type") == kind]


@dataclass(frozen=True)
class Classified:
    """What units and validity read of an item, worked out once."""

    kind: ItemKind
    # An assistant message of Chat's shape (no `type`): one per step, never joined with the next.
    plain_assistant: bool
    calls: tuple[str, ...]
    answers: str | None

    @classmethod
    def of(cls, item: Mapping[str, Any]) -> Classified:
        return cls(kind=item_kind(item), plain_assistant=item.get("role") == "assistant" and item.get("type") is None,
                   calls=call_ids(item), answers=answered_call_id(item))


@dataclass(frozen=True)
class StoredMessage:
    """One history message as the store keeps it: the provider's JSON, numbered, with its turn and time."""

    seq: int
    turn: int
    at: datetime
    body: Mapping[str, Any]
    tokens: int

    @cached_property
    def classified(self) -> Classified:
        # Kept on the message: the gateway reuses a memory's messages across calls, so each is read once.
        return Classified.of(self.body)

    @property
    def kind(self) -> ItemKind:
        return self.classified.kind


def request_shape(request: Mapping[str, Any]) -> Shape:
    """Anthropic Messages requests are marked; Chat Completions requests carry `messages`; Responses `input`."""
    if isinstance(request, MessagesRequest):
        return "messages"
    if "messages" in request:
        return "chat_completions"
    if "input" in request:
        return "responses"
    raise ValueError("a request needs `messages` (Chat Completions) or `input` (Responses)")


def item_kind(item: Mapping[str, Any]) -> ItemKind:
    """What part an item plays in a conversation, in either shape."""
    kind = item.get("type")
    role = item.get("role")
    if role in ("tool", "function") or kind in _OUTPUT_TYPES:
        return "output"
    if kind in CALL_OUTPUT_TYPES or kind in _STEP_TYPES:
        return "step"
    if kind not in (None, "message"):
        return "other"
    if role == "user" and kind is None and _blocks(item, "tool_result"):
        return "output"  # Anthropic: tool results come back in a user message, which opens no turn
    if role == "user":
        return "user"
    if role == "assistant":
        return "step"
    if role in ("system", "developer"):
        return "instruction"
    return "other"


def call_ids(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of the calls an item makes that the client must answer."""
    if item.get("type") in CALL_OUTPUT_TYPES:
        call_id = item.get("call_id")
        return (call_id,) if isinstance(call_id, str) else ()
    if item.get("role") == "assistant" and item.get("type") in (None, "message"):
        calls = item.get("tool_calls") or []
        found = tuple(c["id"] for c in calls if isinstance(c, Mapping) and isinstance(c.get("id"), str))
        return found + tuple(b["id"] for b in _blocks(item, "tool_use") if isinstance(b.get("id"), str))
    return ()


def answered_call_id(item: Mapping[str, Any]) -> str | None:
    """The id of the call an output answers (an Anthropic user message's first), or None for no output."""
    answered = answered_call_ids(item)
    return answered[0] if answered else None


def answered_call_ids(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids of every call an output answers: one, or in Anthropic each `tool_result` of a user message."""
    if item.get("role") == "tool":
        value = item.get("tool_call_id")
    elif item.get("type") in _OUTPUT_TYPES:
        value = item.get("call_id")
    elif item.get("role") == "user" and item.get("type") is None:
        return tuple(b["tool_use_id"] for b in _blocks(item, "tool_result") if isinstance(b.get("tool_use_id"), str))
    else:
        return ()
    return (value,) if isinstance(value, str) else ()


def _items(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = request.get("input") if request_shape(request) == "responses" else request.get("messages")
    if isinstance(items, str):
        # Responses allows a bare string: it is one user message.
        return [{"role": "user", "content": items}]
    return list(items or [])


def instruction_items(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The agent's instructions: the system or developer messages the request opens with (none in Anthropic's
    shape, whose instructions are the top-level `system`, a request field like any other)."""
    if request_shape(request) == "messages":
        return []
    items = _items(request)
    count = 0
    while count < len(items) and item_kind(items[count]) == "instruction":
        count += 1
    return items[:count]


def history_items(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Everything after the opening instructions: the history the memory holds."""
    items = _items(request)
    return items[len(instruction_items(request)):]
