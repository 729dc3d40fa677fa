"""Anthropic Messages requests and replies as Lethe validates them: only as far as Lethe reads them and the
next request sends them back; every other field and block passes through untouched (thinking blocks whole,
signatures and all)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictInt, Tag, ValidationError

from contracts.errors import InvalidInput
from engine.blocks.note_ask import NOTE_TOOL_NAME
from service.replies import MAX_NOTE_DEPTH
from service.validation import invalid_from_validation

__all__ = ["MessagesRequestBody", "unanswerable_results", "validate_messages_reply", "validate_messages_request"]

# As for the OpenAI shapes (service/replies.py): far above any real reply, and a count providers keep in 32 bits.
_MAX_ITEMS = 1000
_Tokens = Annotated[StrictInt, Field(ge=0, le=2**31 - 1)]
_Id = Annotated[str, Field(min_length=1, max_length=200)]
_Name = Annotated[str, Field(min_length=1, max_length=200)]


class _PassThrough(BaseModel):
    model_config = ConfigDict(extra="allow")


def _by_type(tags: dict[str, str]) -> Any:
    # Tags are capitalised so the error's path skips them (service/validation.py) and names the field alone.
    def kind(value: Any) -> str:
        found = value.get("type") if isinstance(value, dict) else None
        return tags.get(found, "Other") if isinstance(found, str) else "Other"

    return Discriminator(kind)


class _Text(_PassThrough):
    type: Literal["text"]
    text: str


class _Image(_PassThrough):
    type: Literal["image"]
    source: dict[str, Any]


class _ToolUse(_PassThrough):
    type: Literal["tool_use"]
    id: _Id
    name: _Name
    input: dict[str, Any]


class _Thinking(_PassThrough):
    type: Literal["thinking"]
    thinking: str


class _RedactedThinking(_PassThrough):
    type: Literal["redacted_thinking"]
    data: str


class _OtherBlock(_PassThrough):
    # Block kinds Lethe does not read (documents, server tools, kinds to come) pass through; a kind they need.
    type: _Name


_INNER_TAGS = {"text": "Text", "image": "Image"}
_Inner = Annotated[
    Annotated[_Text, Tag("Text")] | Annotated[_Image, Tag("Image")] | Annotated[_OtherBlock, Tag("Other")],
    _by_type(_INNER_TAGS),
]


class _ToolResult(_PassThrough):
    type: Literal["tool_result"]
    tool_use_id: _Id
    content: str | Annotated[list[_Inner], Field(max_length=_MAX_ITEMS)] | None = None


_BLOCK_TAGS = {**_INNER_TAGS, "tool_use": "ToolUse", "tool_result": "ToolResult", "thinking": "Thinking",
               "redacted_thinking": "RedactedThinking"}
_Block = Annotated[
    Annotated[_Text, Tag("Text")] | Annotated[_Image, Tag("Image")] | Annotated[_ToolUse, Tag("ToolUse")]
    | Annotated[_ToolResult, Tag("ToolResult")] | Annotated[_Thinking, Tag("Thinking")]
    | Annotated[_RedactedThinking, Tag("RedactedThinking")] | Annotated[_OtherBlock, Tag("Other")],
    _by_type(_BLOCK_TAGS),
]
_Blocks = Annotated[list[_Block], Field(max_length=_MAX_ITEMS)]


class _Message(_PassThrough):
    role: Literal["user", "assistant"]
    content: str | _Blocks


class _Tool(_PassThrough):
    # Client tools carry `input_schema`; server tools (`type`: web_search_...) only a name.
    name: _Name


class MessagesRequestBody(_PassThrough):
    model: str = Field(min_length=1, max_length=200)
    messages: list[_Message] = Field(min_length=1)
    system: str | list[_Text] | None = None
    tools: list[_Tool] | None = None


def validate_messages_request(body: dict[str, Any]) -> None:
    """Wrong types where Lethe reads, and a `tool_result` answering no `tool_use` before it, refused naming the
    field (the store is asked too: the call may have come in an earlier request)."""
    try:
        MessagesRequestBody.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc


def unanswerable_results(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(field, tool_use_id) of each `tool_result` with no `tool_use` before it in this request."""
    called: set[str] = set()
    found: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use" and message.get("role") == "assistant":
                called.add(str(block.get("id")))
            elif block.get("type") == "tool_result" and block.get("tool_use_id") not in called:
                found.append((f"messages[{i}].content[{j}].tool_use_id", str(block.get("tool_use_id"))))
    return found


class _Usage(_PassThrough):
    input_tokens: _Tokens | None = None
    output_tokens: _Tokens | None = None
    cache_read_input_tokens: _Tokens | None = None
    cache_creation_input_tokens: _Tokens | None = None


class _Reply(_PassThrough):
    type: Literal["message"] | None = None
    role: Literal["assistant"]
    content: _Blocks
    stop_reason: str | None = None
    usage: _Usage | None = None


def validate_messages_reply(response: dict[str, Any]) -> None:
    if "choices" in response or "output" in response:
        raise InvalidInput("a Messages reply carries `content`, not `choices` or `output`", field="response.content")
    try:
        _Reply.model_validate(response)
    except ValidationError as exc:
        raise invalid_from_validation(exc, prefix=("response",)) from exc
    for index, block in enumerate(response["content"]):
        if block.get("type") == "tool_use" and block.get("name") == NOTE_TOOL_NAME and _depth(block["input"]) > \
                MAX_NOTE_DEPTH:
            field = f"response.content[{index}].input"
            raise InvalidInput(f"{field}: the note call's input nests deeper than {MAX_NOTE_DEPTH} levels",
                               field=field)


def _depth(value: Any) -> int:
    """How deep JSON nests, walked without recursion (deep nesting is what would break a recursive walk)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest
