"""Provider requests and replies in the three shapes (Chat Completions, Responses, Anthropic Messages):
validated as far as Lethe depends on them, nothing more."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from contracts.errors import InvalidInput
from engine.anthropic import looks_like_messages, reply_message
from engine.messages import MessagesRequest, Shape, history_items
from service.anthropic import validate_messages_reply, validate_messages_request
from service.replies import validate_reply
from service.requests import ChatCompletionsRequest, ReportRequest, ResponsesRequest
from service.validation import invalid_from_validation

__all__ = ["SHAPES", "agent_reply_is_empty", "parse_report", "parse_request", "reply_items", "role_of",
           "usage_input_tokens"]

SHAPES: tuple[Shape, ...] = ("chat_completions", "responses", "messages")


def parse_request(body: Any, *, shape: str | None = None) -> tuple[Shape, list[dict[str, Any]]]:
    """Validate a provider request; return its shape and its history (the opening instructions excluded).

    `shape` is the caller's word for it; without one an Anthropic Messages request is told from Chat
    Completions by what only Anthropic has (`system`, its content blocks, tools with `input_schema`)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", field="body")
    if shape is not None and shape not in SHAPES:
        raise InvalidInput(f"the shape must be one of {', '.join(SHAPES)}", field="X-Lethe-Shape")
    if shape == "messages" or (shape is None and "messages" in body and "input" not in body
                               and looks_like_messages(body)):
        validate_messages_request(body)
        return "messages", [dict(item) for item in history_items(MessagesRequest(body))]
    if "messages" in body and "input" in body:
        raise InvalidInput("send either `messages` (Chat Completions) or `input` (Responses), not both",
                           field="input")
    try:
        if "input" in body:
            ResponsesRequest.model_validate(body)
        else:
            ChatCompletionsRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc
    found: Shape = "responses" if "input" in body else "chat_completions"
    return found, [dict(item) for item in history_items(body)]


def parse_report(body: Any) -> ReportRequest:
    try:
        return ReportRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc


def reply_items(shape: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages a provider reply adds to history: the first choice's message, the output items, or the
    Messages reply as an assistant message."""
    if shape == "messages":
        validate_messages_reply(response)
        return [reply_message(response)]
    validate_reply(shape, response)
    if shape == "responses":
        output = response.get("output")
        if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
            raise InvalidInput("a Responses reply needs an `output` list of items", field="response.output")
        return list(output)
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidInput("a Chat Completions reply needs a non-empty `choices` list", field="response.choices")
    message = choices[0].get("message")
    if not isinstance(message, dict) or message.get("role") != "assistant":
        raise InvalidInput("the first choice needs an assistant `message`", field="response.choices[0].message")
    return [message]


def agent_reply_is_empty(shape: str, agent_response: dict[str, Any]) -> bool:
    """True when, the note call taken out, the model said nothing the agent can act on."""
    if shape == "messages":
        return not any(block.get("type") not in ("thinking", "redacted_thinking")
                       for block in agent_response.get("content") or [])
    if shape == "responses":
        return not any(item.get("type") not in ("reasoning",) for item in agent_response.get("output") or [])
    message = agent_response["choices"][0]["message"]
    return not message.get("content") and not message.get("tool_calls")


def usage_input_tokens(response: dict[str, Any]) -> int:
    """The provider's count of the request it answered (Chat `prompt_tokens`, Responses `input_tokens`;
    Anthropic's `input_tokens` leaves out what was read from or written to its prompt cache, added here)."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return 0
    parts = [usage.get("prompt_tokens", usage.get("input_tokens", 0)),
             usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")]
    value = sum(part for part in parts if isinstance(part, int) and part > 0)
    return value


def role_of(message: dict[str, Any]) -> str:
    # A label for operators (its column holds 40 characters); the message itself is kept whole.
    return str(message.get("role") or message.get("type") or "unknown")[:40]
