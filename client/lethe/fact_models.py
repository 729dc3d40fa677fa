"""What the gateway answers about a memory's facts: search hits, a fact written or forgotten, the listing."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FactForgotten", "FactHit", "FactHits", "FactRecord", "FactWritten", "Facts"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer gateways may say more


class FactHit(_Model):
    """A fact in force (`kind` "fact") or a passage of a sealed episode (`kind` "passage"), with its score."""

    kind: str
    id: str | int
    score: float
    at: str
    note: str | None = None
    subject: str | None = None
    object: str | None = None
    milestone: bool | None = None
    source: str | None = None
    valid_from: str | None = None
    text: str | None = None  # a passage's
    first_turn: int | None = None
    last_turn: int | None = None


class FactHits(_Model):
    memory_id: str | None = None  # a memory's facts
    user_id: str | None = None  # or a user's
    query: str
    results: list[FactHit]


class FactWritten(_Model):
    memory_id: str | None = None
    user_id: str | None = None
    id: str
    note: str
    subject: str
    object: str
    milestone: bool
    source: str
    at: str
    corrects: str | None = None  # the fact it retired


class FactForgotten(_Model):
    memory_id: str | None = None
    user_id: str | None = None
    id: str
    done: str  # "forgotten" or "erased"
    facts: list[str]  # the fact and its restatements


class FactRecord(_Model):
    """One fact as the memory holds it, with validity and provenance (the gateway may add fields)."""

    fact_key: str
    note: str
    subject: str
    object: str
    milestone: bool = False
    source: str = "unknown"
    at: str | None = None
    valid_from: str | None = None
    retired_at: str | None = None
    retired_by: str | None = None
    merged_into: str | None = None
    conflict_with: str | None = None
    origin_memory_id: str | None = None  # a user's fact: the conversation it came from

    @property
    def in_force(self) -> bool:
        """Neither retired (by a newer fact, a correction or a forget) nor merged into the fact it restates."""
        return self.retired_at is None and self.merged_into is None


class Facts(_Model):
    memory_id: str | None = None
    user_id: str | None = None
    facts: list[FactRecord]  # every fact ever held, oldest first
