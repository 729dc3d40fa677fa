"""Arguments and results that cross Temporal between the lane and its jobs: small frozen dataclasses of ids
and numbers, no text.

In `contracts/` (standard library only) so the workflow, which may import nothing else of the project but the
engine, and the activities share one definition. Payloads are JSON objects of the fields; no module path
travels in them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "EventRef",
    "FetchEventsInput",
    "IdleInput",
    "JobInput",
    "MemoryRef",
    "MemoryStatus",
    "ParkInput",
    "ResolveInput",
    "RunEventInput",
    "SleepInput",
]


@dataclass(frozen=True)
class MemoryRef:
    tenant_id: str
    memory_id: str


@dataclass(frozen=True)
class EventRef:
    """One outbox event of a memory: its per-memory number, its kind (decorate, report, ...) and the W3C
    trace context of the call that wrote it, so the jobs it causes join that call's trace."""

    seq: int
    kind: str
    traceparent: str = ""


@dataclass(frozen=True)
class FetchEventsInput:
    memory: MemoryRef
    after_seq: int
    limit: int = 100


@dataclass(frozen=True)
class RunEventInput:
    memory: MemoryRef
    event: EventRef
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JobInput:
    """One job of the lane for one event; the job reads whatever else it needs (the payload) by these ids."""

    memory: MemoryRef
    event: EventRef


@dataclass(frozen=True)
class IdleInput:
    """Make the turns of a quiet conversation, up to its user message at `for_user_message_at`, searchable from
    the user's graph."""

    memory: MemoryRef
    for_user_message_at: datetime


@dataclass(frozen=True)
class SleepInput:
    """Prepare the sleep due after the user message at `for_user_message_at` (the message's own time)."""

    memory: MemoryRef
    for_user_message_at: datetime


@dataclass(frozen=True)
class ParkInput:
    """A job that kept failing: recorded for operators, then the lane moves on."""

    memory: MemoryRef
    seq: int
    job: str
    error: str


@dataclass(frozen=True)
class ResolveInput:
    """A parked job that ran again and succeeded."""

    memory: MemoryRef
    seq: int
    job: str


@dataclass(frozen=True)
class MemoryStatus:
    """What the memory waits on, read from Postgres after each job: the workflow shows it and carries nothing
    bigger. Times are the messages' times, never the time a job ran."""

    last_turn: int = 0
    last_user_message_at: datetime | None = None
    # Sleep: due at last_user_message_at + the sleep interval; prepared once per user message.
    sleep_due_at: datetime | None = None
    sleep_prepared_for: datetime | None = None
    # The oldest unanswered note ask: since when, how many calls asked, for which turns.
    note_ask_since: datetime | None = None
    note_asks: int = 0
    note_ask_first_turn: int = 0
    note_ask_last_turn: int = 0
    # Pending for operators once asked this many calls, or from `note_ask_due_at` on.
    note_ask_over_calls: bool = False
    note_ask_due_at: datetime | None = None
    leaving_episodes: int = 0
    backlog: int = 0
    parked_jobs: int = 0
    exists: bool = True
    # The idle gate (issue #37): due at last_user_message_at + the idle period, for a conversation of a user
    # holding turns not yet searchable from the user's graph; None when nothing is owed.
    idle_due_at: datetime | None = None
