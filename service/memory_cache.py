"""What the gateway keeps of recently used memories, so a decorate reads only what changed since the last one.

History (messages) grows at its end, so a cached history stays true: it is extended from Postgres with whatever
came since, from this replica or another. The rare rewrite in place (a replaced user message, an edit's branch)
moves the memory's history version, and a history cached at another version is read again whole.
Episodes, facts and traces change in place: they are kept with the memory's mechanism version (moved by
triggers on every change), and when it has moved, only the rows stamped after it are read (migration 0013);
facts in force, few, are read again whole.
Entries are replaced only after their transaction commits, so a rolled-back call never leaves anything here
that Postgres does not hold. An erased memory comes back under a new row id.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import TypeVar, overload

from cachetools import LRUCache

from engine.episodes import Episode, EpisodeState, hidden_spans, merged_spans
from engine.facts import Fact
from engine.messages import StoredMessage
from engine.recognition import HeldMessage
from engine.traces import Trace

__all__ = ["CachedMemory", "History", "MemoryCache", "MemoryContents", "Prefix"]

T = TypeVar("T")


class Prefix(Sequence[T]):
    """The first `length` items of a list that only ever grows at its end: many histories share one list, so
    extending a long memory's history copies nothing. An extension from a shorter prefix than the list now
    holds (a call rolled back after appending) copies once, leaving the longer one as it was."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[T] | None = None, length: int | None = None) -> None:
        self._items = items if items is not None else []
        self._length = len(self._items) if length is None else length

    def extended(self, more: Iterable[T]) -> Prefix[T]:
        items = self._items if len(self._items) == self._length else self._items[:self._length]
        items.extend(more)
        return Prefix(items, len(items))

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return self._items[slice(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._length)


@dataclass(frozen=True)
class History:
    """A memory's messages in seq order, and those the agent holds as it holds them (for recognition)."""

    messages: Prefix[StoredMessage] = field(default_factory=Prefix)
    held: Prefix[HeldMessage] = field(default_factory=Prefix)

    @property
    def last_seq(self) -> int:
        return self.messages[-1].seq if self.messages else 0

    def extended(self, rows: Sequence[tuple[StoredMessage, HeldMessage | None]]) -> History:
        if not rows:
            return self
        return History(self.messages.extended(m for m, _ in rows),
                       self.held.extended(h for _, h in rows if h is not None))

    def branched_from(self, seq: int) -> History:
        """The history after an edit of the user message at `seq`: that message and what followed it are no
        longer held by the agent (store.repositories.messages.branch_from)."""
        return History(self.messages, Prefix([replace(h, optional=True) if h.seq >= seq else h for h in self.held]))

    def without_last(self) -> History:
        """The history before its last message, a user message (which the agent holds, so `held` ends with it)."""
        return History(Prefix(self.messages[:-1]), Prefix(self.held[:-1]))


@dataclass(frozen=True)
class MemoryContents:
    """A memory's episodes, facts in force and counted traces, as loaded up to one mechanism version, kept
    so that a decorate's work follows what is in view, not the length of the history.

    A forgotten episode stays forgotten: it is kept only as a span of hidden history (joined with its
    neighbours) and, for the recent tail a decorate still reads, as itself; its traces are dropped, since no
    fade ranks it again. Episodes still remembered, their traces and the traces of facts are kept whole."""

    version: int
    remembered: Mapping[str, Episode]
    # Forgotten episodes by last seq, their last seqs (for bisect), and their spans joined where they meet.
    forgotten: tuple[Episode, ...]
    forgotten_lasts: tuple[int, ...]
    forgotten_spans: tuple[tuple[int, int], ...]
    # Facts in force, oldest first, and of those the ones the facts block can show (written against a leaving or
    # sealed episode, or a constraint): a long memory's other facts belong to forgotten episodes.
    in_force: Mapping[str, Fact]
    facts: list[Fact]
    episode_traces: Mapping[str, tuple[Trace, ...]]
    fact_traces: Mapping[str, tuple[Trace, ...]]

    @classmethod
    def empty(cls) -> MemoryContents:
        return cls(version=-1, remembered={}, forgotten=(), forgotten_lasts=(), forgotten_spans=(), in_force={},
                   facts=[], episode_traces={}, fact_traces={})

    def updated(self, *, version: int, episodes: Sequence[Episode], traces: Sequence[Trace],
                merged: Mapping[str, str], facts: Sequence[Fact], gone: Sequence[str]) -> MemoryContents:
        """These contents with what changed since their version: `episodes`, `traces` and `facts` (in force)
        stamped after it, the keys of facts no longer in force (`gone`), and of those the ones merged into
        another (`merged`, key -> the fact that stands). Read under the memory's row lock, so no
        row stamped after `version` is in them and none stamped before is missing."""
        remembered, forgotten, lasts, newly_forgotten = self._episodes_after(episodes)
        episode_traces, fact_traces = self._traces_after(traces, merged, remembered)
        in_force = dict(self.in_force)
        for key in gone:
            in_force.pop(key, None)
        in_force.update((fact.id, fact) for fact in facts)
        showing = {e.id for e in remembered.values() if e.state in (EpisodeState.LEAVING, EpisodeState.SEALED)}
        spans = merged_spans([*self.forgotten_spans, *((e.first_seq, e.last_seq) for e in newly_forgotten)])
        return MemoryContents(
            version=version, remembered=remembered, forgotten=tuple(forgotten), forgotten_lasts=tuple(lasts),
            forgotten_spans=tuple(spans), in_force=in_force,
            # A constraint stays in front of the model after its episodes are forgotten (engine.claims).
            facts=[fact for fact in in_force.values()
                   if fact.kind == "constraint" or fact.corrects_episodes or showing.intersection(fact.episode_ids)],
            episode_traces=episode_traces, fact_traces=fact_traces,
        )

    def _episodes_after(
        self, episodes: Sequence[Episode]
    ) -> tuple[dict[str, Episode], list[Episode], list[int], list[Episode]]:
        remembered = dict(self.remembered)
        forgotten, lasts = list(self.forgotten), list(self.forgotten_lasts)
        newly_forgotten: list[Episode] = []
        for episode in episodes:
            if episode.state is not EpisodeState.FORGOTTEN:
                remembered[episode.id] = episode
            elif remembered.pop(episode.id, None) is not None or not _holds(forgotten, lasts, episode):
                newly_forgotten.append(episode)
        for episode in newly_forgotten:
            at = bisect_left(lasts, episode.last_seq)
            forgotten.insert(at, episode)
            lasts.insert(at, episode.last_seq)
        return remembered, forgotten, lasts, newly_forgotten

    def _traces_after(
        self, traces: Sequence[Trace], merged: Mapping[str, str], remembered: Mapping[str, Episode]
    ) -> tuple[dict[str, tuple[Trace, ...]], dict[str, tuple[Trace, ...]]]:
        # A forgotten episode's traces go: no fade ranks it again.
        episode_traces = {key: value for key, value in self.episode_traces.items() if key in remembered}
        fact_traces = dict(self.fact_traces)
        for old, standing in merged.items():
            # Its traces count for the fact that stands from now on, in both indexes (one object each).
            moved = {id(t): replace(t, fact_id=standing) for t in fact_traces.pop(old, ())}
            fact_traces[standing] = fact_traces.get(standing, ()) + tuple(moved.values())
            for key in {t.episode_id for t in moved.values()}.intersection(episode_traces):
                episode_traces[key] = tuple(moved.get(id(t), t) for t in episode_traces[key])
        by_episode: dict[str, list[Trace]] = {}
        by_fact: dict[str, list[Trace]] = {}
        for trace in traces:
            if trace.episode_id in remembered:
                by_episode.setdefault(trace.episode_id, []).append(trace)
            if trace.fact_id is not None:
                by_fact.setdefault(trace.fact_id, []).append(trace)
        for held, added in ((episode_traces, by_episode), (fact_traces, by_fact)):
            for key, more in added.items():
                held[key] = held.get(key, ()) + tuple(more)
        return episode_traces, fact_traces

    def hidden(self) -> list[tuple[int, int]]:
        """The spans of history out of view."""
        return merged_spans([*self.forgotten_spans, *hidden_spans(self.remembered.values())])

    def covered(self) -> int:
        """The last seq up to which episodes cover history without a gap (`engine.cutting.covered_prefix`)."""
        spans = merged_spans([*self.forgotten_spans, *((e.first_seq, e.last_seq) for e in self.remembered.values())])
        return spans[0][1] if spans and spans[0][0] <= 1 else 0

    def episodes_from(self, seq: int) -> list[Episode]:
        """What a decorate reading history from `seq` on needs: every remembered episode, and the forgotten
        ones that hold any of it (the rest hide nothing it reads)."""
        tail = self.forgotten[bisect_left(self.forgotten_lasts, seq):]
        return sorted([*self.remembered.values(), *tail], key=lambda e: e.first_seq)

    def traces_for(self, episodes: Iterable[Episode], facts: Iterable[Fact]) -> list[Trace]:
        """The traces these episodes' and facts' activations sum, each once (a fact's judgment against an
        episode counts for both)."""
        chosen: dict[int, Trace] = {}
        wanted = ((self.episode_traces, (e.id for e in episodes)), (self.fact_traces, (f.id for f in facts)))
        for source, keys in wanted:
            for key in keys:
                for trace in source.get(key, ()):
                    chosen[id(trace)] = trace
        return list(chosen.values())


def _holds(forgotten: list[Episode], lasts: list[int], episode: Episode) -> bool:
    at = bisect_left(lasts, episode.last_seq)
    return at < len(forgotten) and forgotten[at].id == episode.id


@dataclass(frozen=True)
class CachedMemory:
    history: History = field(default_factory=History)
    contents: MemoryContents | None = None
    # The memory's history version the history was read at: another means it was rewritten in place.
    history_version: int = 0


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
