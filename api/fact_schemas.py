"""API shapes of a memory's facts as its user manages them (api/routes/facts.py): bodies and answers."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from service.facts import MAX_NAME, MAX_NOTE

# What kind of claim a fact is (engine.facts.KINDS).
ClaimKind = Literal["constraint", "decision", "correction", "dead_end", "open_question", "fact"]

__all__ = ["NOT_BLANK", "FactCorrect", "FactCreate", "FactForgotten", "FactHitsPublic", "FactWritten",
           "UserFactForgotten", "UserFactHitsPublic", "UserFactWritten"]

# Text with something besides white space: the service strips it and refuses what is left empty.
NOT_BLANK = r"\S"


class FactCreate(BaseModel):
    """A fact as the note tool takes one: a sentence that reads alone and the two entities it links."""

    model_config = ConfigDict(extra="forbid")

    note: str = Field(min_length=1, max_length=MAX_NOTE, pattern=NOT_BLANK)
    subject: str = Field(min_length=1, max_length=MAX_NAME, pattern=NOT_BLANK)
    object: str = Field(min_length=1, max_length=MAX_NAME, pattern=NOT_BLANK)
    milestone: bool = False
    kind: ClaimKind = "fact"


class FactCorrect(BaseModel):
    """The corrected fact; subject, object, milestone and kind default to those of the fact it corrects."""

    model_config = ConfigDict(extra="forbid")

    note: str = Field(min_length=1, max_length=MAX_NOTE, pattern=NOT_BLANK)
    subject: str | None = Field(default=None, min_length=1, max_length=MAX_NAME, pattern=NOT_BLANK)
    object: str | None = Field(default=None, min_length=1, max_length=MAX_NAME, pattern=NOT_BLANK)
    milestone: bool | None = None
    kind: ClaimKind | None = None


class _Written(BaseModel):
    id: str
    note: str
    subject: str
    object: str
    milestone: bool
    source: str
    at: str
    corrects: str | None = None  # the fact it retired
    kind: ClaimKind = "fact"


class FactWritten(_Written):
    memory_id: str


class UserFactWritten(_Written):
    user_id: str


class FactHit(BaseModel):
    """A fact in force (`kind` fact) or a passage of a sealed episode (`kind` passage), with its fused score."""

    kind: Literal["fact", "passage"]
    id: str | int
    score: float
    at: str
    note: str | None = None
    subject: str | None = None
    object: str | None = None
    milestone: bool | None = None
    source: str | None = None
    valid_from: str | None = None
    retired_at: str | None = None
    retired_by: str | None = None
    # A fact's claim kind (`kind` says fact or passage), the fact that settled it when it is an open question,
    # and how it was retired (correction, revision, update).
    claim_kind: ClaimKind | None = None
    settled_by: str | None = None
    retired_as: str | None = None
    origin_memory_id: str | None = None  # a user's fact: the conversation it came from
    text: str | None = None
    first_turn: int | None = None
    last_turn: int | None = None


class _Hits(BaseModel):
    query: str
    results: list[FactHit]


class FactHitsPublic(_Hits):
    memory_id: str


class UserFactHitsPublic(_Hits):
    user_id: str


class _Forgotten(BaseModel):
    id: str
    done: Literal["forgotten", "erased"]
    facts: list[str]  # the fact and its restatements (merged into it), each forgotten or erased alike


class FactForgotten(_Forgotten):
    memory_id: str


class UserFactForgotten(_Forgotten):
    user_id: str
