"""What the store hands out instead of its table rows: frozen copies of their columns, and for the memory the
hot path holds locked, a read-only view whose counters the store's own functions advance.

An ORM row outside the store could be changed by anyone and written with the next commit; these can only be
read, so every write of a memory's state goes through a function of `store/`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, TypeVar

from store.models import MemoryRow

__all__ = ["DecorationRecord", "EpisodeRecord", "MemoryRecord", "frozen_copy", "row_of"]

R = TypeVar("R")


def frozen_copy(row: Any, record: type[R]) -> R:
    """The record's fields read off a row (a record names a subset of the row's columns)."""
    return record(**{f.name: getattr(row, f.name) for f in fields(record)})  # type: ignore[arg-type]


class MemoryRecord:
    """A memory: its name, its counters and its times, to read. The hot path's transaction holds it locked
    (`memories.lock_memory`); `messages`, `outbox`, `memories` and `size_ratios` advance it, and the
    transaction writes what they changed when it commits."""

    __slots__ = ("_row",)

    def __init__(self, row: MemoryRow) -> None:
        self._row = row

    @property
    def id(self) -> int:
        return self._row.id

    @property
    def tenant_id(self) -> str:
        return self._row.tenant_id

    @property
    def memory_id(self) -> str:
        return self._row.memory_id

    @property
    def created_at(self) -> datetime:
        return self._row.created_at

    @property
    def last_event_seq(self) -> int:
        return self._row.last_event_seq

    @property
    def last_message_seq(self) -> int:
        return self._row.last_message_seq

    @property
    def last_turn(self) -> int:
        return self._row.last_turn

    @property
    def last_user_message_at(self) -> datetime | None:
        return self._row.last_user_message_at

    @property
    def latest_at(self) -> datetime | None:
        return self._row.latest_at

    @property
    def mechanism_version(self) -> int:
        return self._row.mechanism_version

    @property
    def sleep_owed(self) -> bool:
        return self._row.sleep_owed

    @property
    def history_version(self) -> int:
        return self._row.history_version

    def size_ratio(self, model: str) -> float | None:
        """This memory's own provider-to-estimate ratio for the model, if it has learned one."""
        own = (self._row.size_ratios or {}).get(model)
        return None if own is None else float(own)

    def __repr__(self) -> str:
        return f"MemoryRecord(id={self.id}, memory_id={self.memory_id!r}, last_turn={self.last_turn})"


def row_of(memory: MemoryRecord) -> MemoryRow:
    """The row behind a memory, for the store's own functions that advance it."""
    return memory._row  # noqa: SLF001 - the store's modules are one unit


@dataclass(frozen=True)
class DecorationRecord:
    """One decorate as recorded: what its report is checked and measured against."""

    id: str
    memory_pk: int
    shape: str
    model: str | None
    turn: int
    at: datetime
    reported_at: datetime | None
    estimated_tokens: int
    fixed_tokens: int
    note_ask_first_turn: int | None
    note_ask_last_turn: int | None
    superseded_by: str | None


@dataclass(frozen=True)
class EpisodeRecord:
    """An episode's row as stored, for the memory's state and the note a report takes."""

    id: int
    memory_pk: int
    episode_key: str
    state: str
    first_seq: int
    last_seq: int
    first_turn: int
    last_turn: int
    tokens: int
    at: datetime
    facts_written: bool
    sealed_without_facts: bool
    asked_at: datetime | None
    asks: int
    # Salience (engine/salience.py): None until the lane has judged the episode.
    act: str | None = None
    intensity: float | None = None
    salience: float | None = None
