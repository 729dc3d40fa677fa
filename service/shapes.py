"""Provider requests and replies in both shapes: validated as far as Lethe depends on them, nothing more."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from contracts.errors import InvalidInput
from engine.messages import Shape, history_items
from service.replies import validate_reply
from service.requests import ChatCompletionsRequest, ReportRequest, ResponsesRequest
from service.validation import invalid_from_validation

__all__ = ["agent_reply_is_empty", "parse_report", "parse_request", "reply_items", "role_of",
           "usage_input_tokens"]


def parse_request(body: Any) -> tuple[Shape, list[dict[str, Any]]]:
    """Validate a provider request; return its shape and its history (the opening instructions excluded)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", field="body")
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
    shape: Shape = "responses" if "input" in body else "chat_completions"
    return shape, [dict(item) for item in history_items(body)]


def parse_report(body: Any) -> ReportRequest:
    try:
        return ReportRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc


def reply_items(shape: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages a provider reply adds to history: the first choice's message, or the output items."""
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
    if shape == "responses":
        return not any(item.get("type") not in ("reasoning",) for item in agent_response.get("output") or [])
    message = agent_response["choices"][0]["message"]
    return not message.get("content") and not message.get("tool_calls")


def usage_input_tokens(response: dict[str, Any]) -> int:
    """The provider's count of the request it answered (Chat `prompt_tokens`, Responses `input_tokens`)."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return 0
    value = usage.get("prompt_tokens", usage.get("input_tokens", 0))
    return value if isinstance(value, int) and value > 0 else 0


def role_of(message: dict[str, Any]) -> str:
    # A label for operators (its column holds 40 characters); the message itself is kept whole.
    return str(message.get("role") or message.get("type") or "unknown")[:40]
