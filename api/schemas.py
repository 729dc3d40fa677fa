"""API shapes: what callers send and get back. Table rows never leave the store as they are.

Provider requests are validated only as far as Lethe depends on them; every other field passes through.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "MEMORY_ID_PATTERN",
    "ChatCompletionsRequest",
    "ChatMessage",
    "BudgetPublic",
    "DecorateResponse",
    "EpisodePublic",
    "ErasedPublic",
    "NoteAskPublic",
    "MemoryPublic",
    "ReportRequest",
    "ReportResponse",
    "ResponsesRequest",
    "TenantCreate",
    "TenantCreated",
]

MEMORY_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class _PassThrough(BaseModel):
    # Fields Lethe does not know are the provider's business: keep them untouched.
    model_config = ConfigDict(extra="allow")


class ChatMessage(_PassThrough):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None

    @field_validator("tool_call_id")
    @classmethod
    def _non_empty(cls, value: str | None) -> str | None:
        if value is not None and not value:
            raise ValueError("must not be empty")
        return value


class ChatCompletionsRequest(_PassThrough):
    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)


class ResponsesRequest(_PassThrough):
    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]]

    @field_validator("input")
    @classmethod
    def _non_empty(cls, value: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        if not value:
            raise ValueError("must not be empty")
        return value


class BudgetPublic(BaseModel):
    ceiling: int
    budget: int
    landing: int
    view_tokens: int


class DecorateResponse(BaseModel):
    decorate_id: str
    shape: Literal["chat_completions", "responses"]
    request: dict[str, Any]
    # Turns whose facts this request asks for (the note ask), or None.
    note_ask_turns: list[int] | None = None
    # This turn slept: 24 h or more since the last user message faded the view before the reply.
    slept: bool = False
    # Lethe's own count of `request`, in tokens.
    estimated_tokens: int = 0
    # The numbers this call was planned with: ceiling, history budget, landing, and the view (history + facts).
    budget: BudgetPublic | None = None


class ReportRequest(BaseModel):
    decorate_id: str = Field(min_length=1, max_length=40)
    response: dict[str, Any]


class ReportResponse(BaseModel):
    response: dict[str, Any]
    # The note call was all the model said: call decorate and the model again to get its answer.
    needs_continuation: bool = False


class NoteAskPublic(BaseModel):
    pending: bool
    turns: list[int] | None
    since: str | None
    asks: int


class EpisodePublic(BaseModel):
    id: str
    state: Literal["live", "leaving", "sealed", "forgotten"]
    first_turn: int
    last_turn: int
    first_seq: int
    last_seq: int
    tokens: int
    facts_written: bool
    sealed_without_facts: bool
    activation: float
    significance: float


class MemoryPublic(BaseModel):
    memory_id: str
    created_at: str
    now: str
    messages: int
    turns: int
    events: int
    facts: int
    last_user_message_at: str | None
    # The facts block as the model sees it now (None when no sealed episode left facts).
    facts_block: str | None = None
    note_ask: NoteAskPublic
    episodes: list[EpisodePublic]


class ErasedPublic(BaseModel):
    memory_id: str
    erased: bool
    workflow_ended: bool


class TenantCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)


class TenantCreated(BaseModel):
    tenant_id: str
    name: str
    api_key: str
