"""Shapes of the inspector's answers: the memory listing, activation over time, the fact history, the workflow."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

__all__ = [
    "ActivationPublic",
    "EpisodeSeriesPublic",
    "FactsPublic",
    "MarkerPublic",
    "MemoryListPublic",
    "MemorySummaryPublic",
    "WorkflowPublic",
]

State = Literal["live", "leaving", "sealed", "forgotten"]


class MemorySummaryPublic(BaseModel):
    memory_id: str
    created_at: str
    # The memory's latest time: its last decorate or report (or its creation).
    last_activity_at: str
    last_user_message_at: str | None
    messages: int
    turns: int
    # Facts in force.
    facts: int
    # Episodes by state: live, leaving, sealed, forgotten.
    episodes: dict[State, int]
    note_ask_pending: bool


class MemoryListPublic(BaseModel):
    memories: list[MemorySummaryPublic]
    # Pass as `cursor` for the next page; None on the last one.
    next_cursor: str | None


class EpisodeSeriesPublic(BaseModel):
    id: str
    state: State
    first_turn: int
    last_turn: int
    # When its messages happened: it has no activation before.
    at: str
    significance: float
    # One value per entry of `times`; None before the episode existed.
    activation: list[float | None]
    # Salience: the episode's act and the salience its encoding counts; None until the lane has judged it.
    act: str | None = None
    salience: float | None = None


class MarkerPublic(BaseModel):
    reason: Literal["fade", "sleep", "ceiling"]
    at: str
    # The turn of the decorate that made it.
    turn: int | None
    # How many episodes it moved.
    episodes: int


class ActivationPublic(BaseModel):
    memory_id: str
    now: str
    # `from` and `to` as used (defaults: the first shown episode's time, and now).
    from_: str
    to: str
    times: list[str]
    episodes_total: int
    # More episodes fell in the turn range than `limit` allowed.
    truncated: bool
    episodes: list[EpisodeSeriesPublic]
    markers: list[MarkerPublic]

    model_config = {"populate_by_name": True, "alias_generator": lambda name: "from" if name == "from_" else name}


class FactsPublic(BaseModel):
    memory_id: str
    # Every fact ever written, oldest first, current (`retired_at` null) and retired, with all their fields.
    facts: list[dict[str, Any]]


class WorkflowPublic(BaseModel):
    workflow_id: str
    namespace: str
    # The workflow's page in the Temporal UI (LETHE_TEMPORAL_UI_URL), None when not configured.
    temporal_ui_url: str | None
