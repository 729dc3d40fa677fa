"""What the gateway keeps of recently used memories, so a decorate reads only what changed since the last one.

History (messages) is append-only, so a cached history stays true: it is extended from Postgres with whatever
came since, from this replica or another. Episodes, facts and traces change in place, so they are kept with
the memory's mechanism version (moved by triggers on every change) and reused only while it has not moved.
Entries are replaced only after their transaction commits, so a rolled-back call never leaves anything here
that Postgres does not hold. An erased memory comes back under a new row id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cachetools import LRUCache

from engine.episodes import Episode
from engine.facts import Fact
from engine.messages import StoredMessage
from engine.recognition import HeldMessage
from engine.traces import Trace

__all__ = ["CachedMemory", "History", "MemoryCache", "MemoryContents"]


@dataclass(frozen=True)
class History:
    """A memory's messages in seq order, and those the agent holds as it holds them (for recognition)."""

    messages: list[StoredMessage] = field(default_factory=list)
    held: list[HeldMessage] = field(default_factory=list)

    @property
    def last_seq(self) -> int:
        return self.messages[-1].seq if self.messages else 0

    def extended(self, rows: Sequence[tuple[StoredMessage, HeldMessage | None]]) -> History:
        if not rows:
            return self
        return History(self.messages + [m for m, _ in rows], self.held + [h for _, h in rows if h is not None])


@dataclass(frozen=True)
class MemoryContents:
    """A memory's episodes, facts in force and counted traces, as loaded at one mechanism version."""

    version: int
    episodes: list[Episode]
    facts: list[Fact]
    traces: list[Trace]


@dataclass(frozen=True)
class CachedMemory:
    history: History = field(default_factory=History)
    contents: MemoryContents | None = None


class MemoryCache:
    """Least recently used memories first out, bounded by the messages held in all."""

    def __init__(self, *, max_messages: int = 200_000) -> None:
        self.max_messages = max_messages
        self._memories: LRUCache[tuple[str, int], CachedMemory] = LRUCache(
            maxsize=max_messages, getsizeof=lambda memory: len(memory.history.messages))

    def get(self, tenant_id: str, memory_pk: int) -> CachedMemory:
        return self._memories.get((tenant_id, memory_pk)) or CachedMemory()

    def put(self, tenant_id: str, memory_pk: int, memory: CachedMemory) -> None:
        key = (tenant_id, memory_pk)
        self._memories.pop(key, None)
        if len(memory.history.messages) <= self.max_messages:  # a bigger one is never kept
            self._memories[key] = memory
