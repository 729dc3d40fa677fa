"""Provider requests and report bodies as Lethe validates them: only as far as Lethe depends on them; every
other field passes through."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ChatCompletionsRequest", "ChatMessage", "ReportRequest", "ResponsesItem", "ResponsesRequest"]


class _PassThrough(BaseModel):
    # Fields Lethe does not know are the provider's business: keep them untouched.
    model_config = ConfigDict(extra="allow")


class ChatMessage(_PassThrough):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = Field(default=None, min_length=1)


class ChatCompletionsRequest(_PassThrough):
    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1)


class ResponsesItem(_PassThrough):
    """A Responses input item, as far as Lethe reads it: what kind it is and which call it makes or answers."""

    type: str | None = Field(default=None, max_length=200)
    role: str | None = Field(default=None, max_length=200)
    call_id: str | None = Field(default=None, max_length=200)


def _non_empty_either(schema: dict[str, Any]) -> None:
    for member in schema.get("anyOf", []):
        member.update({"string": {"minLength": 1}, "array": {"minItems": 1}}.get(member.get("type"), {}))


class ResponsesRequest(_PassThrough):
    model: str = Field(min_length=1, max_length=200)
    # Never empty, as the document says (a text of one character or more, a list of one item or more).
    input: str | list[ResponsesItem] = Field(json_schema_extra=_non_empty_either)

    @field_validator("input")
    @classmethod
    def _non_empty(cls, value: str | list[ResponsesItem]) -> str | list[ResponsesItem]:
        if not value:
            raise ValueError("must not be empty")
        return value


class ReportRequest(BaseModel):
    # The characters decorate's ids are made of: anything else (a NUL, say) names none, and the store refuses it.
    decorate_id: str = Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.:-]+$")
    response: dict[str, Any]
