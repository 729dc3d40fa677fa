"""Arguments and results that cross Temporal: small frozen dataclasses of ids and numbers, no text.

Dependency-free on purpose, so the workflow sandbox can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EventRef", "FetchEventsInput", "MemoryRef", "RunEventInput"]


@dataclass(frozen=True)
class MemoryRef:
    tenant_id: str
    memory_id: str


@dataclass(frozen=True)
class EventRef:
    """One outbox event of a memory: its per-memory number and its kind (decorate, report, ...)."""

    seq: int
    kind: str


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
