"""API shapes: what callers get back, and the bodies of Lethe's own calls. Provider requests are validated in
`service.requests`."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

__all__ = [
    "MEMORY_ID_PATTERN",
    "GraphPublic",
    "BudgetPublic",
    "DecorateResponse",
    "EpisodePublic",
    "KeyPublic",
    "ErrorBody",
    "ErrorDetail",
    "ErasedPublic",
    "NoteAskPublic",
    "MemoryPublic",
    "ReportResponse",
    "TenantCreate",
    "TenantCreated",
]

MEMORY_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class BudgetPublic(BaseModel):
    ceiling: int
    budget: int
    landing: int
    view_tokens: int


class DecorateResponse(BaseModel):
    decorate_id: str
    shape: Literal["chat_completions", "responses", "messages"]
    request: dict[str, Any]
    # Turns whose facts this request asks for (the note ask), or None.
    note_ask_turns: list[int] | None = None
    # This call slept: 24 h or more of silence faded the view before the reply (a sleep that met a fade in
    # progress waits for it to end, and is reported by the call where it happens).
    slept: bool = False
    # Lethe's own count of `request`, in tokens.
    estimated_tokens: int = 0
    # The numbers this call was planned with: ceiling, history budget, landing, and the view (history + facts).
    budget: BudgetPublic | None = None


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
    # Salience: the episode's act and the salience its encoding counts; None until the lane has judged it.
    act: str | None = None
    salience: float | None = None


class GraphPublic(BaseModel):
    """The knowledge graph's size: entities, facts in force, facts retired by newer ones, restatements merged
    into the fact they repeat, and passages of sealed and forgotten episodes."""

    entities: int
    current_facts: int
    retired_facts: int
    merged_facts: int
    passages: int


class RecallBlockPublic(BaseModel):
    """One turn's recall block: as first placed, and as distilled once the next user message came (None while
    not yet distilled; `removed` when distill kept nothing)."""

    turn: int
    before_seq: int
    provenance: Literal["prepared", "inline", "hits", "partial"]
    at: str
    placed: str
    fact_ids: list[int]
    passage_ids: list[int]
    distilled: str | None
    distilled_fact_ids: list[int] | None
    distilled_passage_ids: list[int] | None
    removed: bool
    distilled_at: str | None


class MemoryPublic(BaseModel):
    memory_id: str
    created_at: str
    now: str
    messages: int
    turns: int
    events: int
    facts: int
    graph: GraphPublic
    last_user_message_at: str | None
    # The facts block as the model sees it now (None when no sealed episode left facts).
    facts_block: str | None = None
    note_ask: NoteAskPublic
    episodes: list[EpisodePublic]
    recall_blocks: list[RecallBlockPublic] = []


class ImportedPublic(BaseModel):
    memory_id: str
    imported: bool
    rows: dict[str, int]  # section of the export -> rows imported


class ErasedPublic(BaseModel):
    memory_id: str
    erased: bool
    workflow_ended: bool


class TenantCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)

    @field_validator("name")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("must not hold control characters")
        return value


class ErrorDetail(BaseModel):
    type: str
    message: str
    # The part of the request at fault, where there is one: `messages[2].role`, `X-Lethe-Now`, `memory_id`.
    field: str | None = None


class ErrorBody(BaseModel):
    """Every error Lethe answers: `{"error": {"type", "message", "field"?}}`."""

    error: ErrorDetail


class TenantCreated(BaseModel):
    tenant_id: str
    name: str
    api_key: str  # shown this once; Lethe keeps only its hash
    key_id: int
    prefix: str


class KeyPublic(BaseModel):
    """A key as listed: never the key itself, only its first characters."""

    key_id: int
    prefix: str
    created_at: str
    revoked_at: str | None

    @classmethod
    def of(cls, row: Any) -> KeyPublic:
        return cls(key_id=row.id, prefix=row.prefix, created_at=row.created_at.isoformat(),
                   revoked_at=row.revoked_at.isoformat() if row.revoked_at else None)
