"""A provider's reply as report validates it, in both shapes, before anything is stored.

What Lethe reads (the note call, the message history keeps, the usage it learns sizes from) is checked strictly,
and so is what the agent sends back in its next request (roles, content parts, tool calls): a reply that history
keeps must be one the next decorate, and the provider after it, accept. Everything else passes through untouched.
Lists are bounded: no model answers with thousands of choices or items, and each costs a walk or a stored row.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictInt, Tag, ValidationError

from contracts.errors import InvalidInput
from engine.blocks.note_ask import NOTE_TOOL_NAME
from service.validation import invalid_from_validation

__all__ = ["MAX_NOTE_DEPTH", "MAX_REPLY_ITEMS", "MAX_TOKENS", "validate_reply"]

# Far above any real reply (OpenAI's `n` stops at 128; parallel tool calls are a handful).
MAX_REPLY_ITEMS = 1000
# A token count past this counts no real request or reply (providers keep counts in 32 bits).
MAX_TOKENS = 2**31 - 1
# The note call's arguments are JSON Lethe parses: no deeper than a body may nest (api/body.py).
MAX_NOTE_DEPTH = 64

_Tokens = Annotated[StrictInt, Field(ge=0, le=MAX_TOKENS)]
_Id = Annotated[str, Field(min_length=1, max_length=200)]
_Name = Annotated[str, Field(min_length=1, max_length=200)]


class _Reply(BaseModel):
    # A provider reply as far as Lethe reads it; the rest passes through.
    model_config = ConfigDict(extra="allow")


def _kind(tags: dict[str, str], *, missing: str = "Other") -> Any:
    """A discriminator by `type`. Its tags are capitalised: the error's path skips them (service/validation.py),
    so it names the field alone. Anything else is `Other`, whose own model says what is wrong with it."""

    def kind(value: Any) -> str:
        if not isinstance(value, dict):
            return "Other"
        found = value.get("type")
        if found is None:
            return missing
        return tags.get(found, "Other") if isinstance(found, str) else "Other"

    return Discriminator(kind)


class _Usage(_Reply):
    """The counts providers send; anything else in `usage` (a cost, the details) is theirs."""

    prompt_tokens: _Tokens | None = None
    completion_tokens: _Tokens | None = None
    total_tokens: _Tokens | None = None
    input_tokens: _Tokens | None = None
    output_tokens: _Tokens | None = None
    prompt_tokens_details: dict[str, Any] | None = None
    completion_tokens_details: dict[str, Any] | None = None
    input_tokens_details: dict[str, Any] | None = None
    output_tokens_details: dict[str, Any] | None = None


class _TextPart(_Reply):
    type: Literal["text", "output_text", "summary_text", "reasoning_text"]
    text: str


class _RefusalPart(_Reply):
    type: Literal["refusal"]
    refusal: str


class _OtherPart(_Reply):
    type: _Name


_Part = Annotated[
    Annotated[_TextPart, Tag("Text")] | Annotated[_RefusalPart, Tag("Refusal")] | Annotated[_OtherPart, Tag("Other")],
    _kind({"text": "Text", "output_text": "Text", "summary_text": "Text", "reasoning_text": "Text",
           "refusal": "Refusal"}),
]
_Parts = Annotated[list[_Part], Field(max_length=MAX_REPLY_ITEMS)]


# --- Chat Completions ---


class _Function(_Reply):
    name: _Name
    arguments: str


class _FunctionToolCall(_Reply):
    id: _Id
    type: Literal["function"] = "function"
    function: _Function


class _OtherToolCall(_Reply):
    # Kinds other than `function` (`custom`, kinds to come) pass through: the agent answers them.
    id: _Id
    type: _Name


_ToolCall = Annotated[
    Annotated[_FunctionToolCall, Tag("Function")] | Annotated[_OtherToolCall, Tag("Other")],
    _kind({"function": "Function"}, missing="Function"),
]


class _ChatReplyMessage(_Reply):
    role: str | None = None  # the first choice's is checked by `reply_items`, naming the message
    content: str | _Parts | None = None
    refusal: str | None = None
    tool_calls: Annotated[list[_ToolCall], Field(max_length=MAX_REPLY_ITEMS)] | None = None


class _Choice(_Reply):
    index: StrictInt | None = None
    message: _ChatReplyMessage | None = None
    finish_reason: str | None = None


class _ChatReply(_Reply):
    choices: Annotated[list[_Choice], Field(max_length=MAX_REPLY_ITEMS)]
    usage: _Usage | None = None


# --- Responses ---


class _ResponsesMessage(_Reply):
    type: Literal["message"]
    role: Literal["assistant"]
    content: str | _Parts


class _FunctionCall(_Reply):
    type: Literal["function_call"]
    call_id: _Id
    name: _Name
    arguments: str


class _Reasoning(_Reply):
    type: Literal["reasoning"]
    summary: _Parts | None = None
    content: _Parts | None = None
    encrypted_content: str | None = None


class _OtherItem(_Reply):
    # Kinds Lethe does not read (web searches, kinds to come) pass through; their kind must still be one.
    type: _Name
    call_id: _Id | None = None


_OutputItem = Annotated[
    Annotated[_ResponsesMessage, Tag("Message")] | Annotated[_FunctionCall, Tag("FunctionCall")]
    | Annotated[_Reasoning, Tag("Reasoning")] | Annotated[_OtherItem, Tag("Other")],
    _kind({"message": "Message", "function_call": "FunctionCall", "reasoning": "Reasoning"}),
]


class _ResponsesReply(_Reply):
    output: Annotated[list[_OutputItem], Field(max_length=MAX_REPLY_ITEMS)]
    usage: _Usage | None = None


def _note_arguments(shape: str, response: dict[str, Any]) -> list[tuple[str, str]]:
    """Each note call's arguments with the field that holds them (the reply already validated)."""
    if shape == "responses":
        return [(f"response.output[{i}].arguments", item["arguments"]) for i, item in enumerate(response["output"])
                if item.get("type") == "function_call" and item.get("name") == NOTE_TOOL_NAME]
    return [(f"response.choices[{i}].message.tool_calls[{j}].function.arguments", call["function"]["arguments"])
            for i, choice in enumerate(response["choices"]) if choice.get("message")
            for j, call in enumerate(choice["message"].get("tool_calls") or [])
            if isinstance(call.get("function"), dict) and call["function"].get("name") == NOTE_TOOL_NAME]


def _check_note_arguments(field: str, arguments: str) -> None:
    """Lethe parses the note call's arguments: refuse what nests deeper than a body may. Arguments that are not
    JSON, or not an object, are the model's mistake, answered in history with `Not recorded` (a 2xx)."""
    too_deep = InvalidInput(f"{field}: the note call's arguments nest deeper than {MAX_NOTE_DEPTH} levels",
                            field=field)
    try:
        parsed = json.loads(arguments)
    except RecursionError:
        raise too_deep from None
    except ValueError:
        return
    stack = [(parsed, 0)]
    while stack:  # iteratively: deep nesting is what would break a recursive walk
        node, depth = stack.pop()
        if depth > MAX_NOTE_DEPTH:
            raise too_deep
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)


def validate_reply(shape: str, response: dict[str, Any]) -> None:
    """Wrong types anywhere Lethe reads are refused here, naming the field, before anything is stored."""
    if shape == "responses" and "choices" in response:
        raise InvalidInput("a Responses reply carries `output`, not `choices`", field="response.choices")
    try:
        (_ResponsesReply if shape == "responses" else _ChatReply).model_validate(response)
    except ValidationError as exc:
        raise invalid_from_validation(exc, prefix=("response",)) from exc
    for field, arguments in _note_arguments(shape, response):
        _check_note_arguments(field, arguments)
