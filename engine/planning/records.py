"""The records of a decorate: what the store hands in (`StoredMemory`), what `decide` leaves for `finish`
(`Decided`), and the plan the store persists (`DecoratePlan`), the last two sharing `PlanCore`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.budget import Budget
from engine.episodes import Episode, Transition
from engine.facts import Fact
from engine.messages import StoredMessage
from engine.planning.view import LetheText, ViewSizes
from engine.recall.grouping import Recalled
from engine.traces import Trace, encoding_trace

__all__ = ["Decided", "DecoratePlan", "PlanCore", "StoredMemory"]


@dataclass(frozen=True)
class StoredMemory:
    """What the store holds for one memory, loaded for a decorate. Messages are the history in seq order,
    the new ones included."""

    messages: Sequence[StoredMessage]
    episodes: Sequence[Episode] = ()
    facts: Sequence[Fact] = ()
    traces: Sequence[Trace] = ()
    # Recall blocks as the history carries them, by the seq of the user message each stands before (distilled
    # text once distilled; a removed one is absent). They leave the view with their user message's episode.
    recall_blocks: Mapping[int, str] = field(default_factory=dict)
    # The fact ids each of those blocks holds: a fact in a block still in view is not recalled again.
    recall_shown: Mapping[int, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PlanCore:
    """What the store persists of a decorate, decided before recall answers: `Decided` and `DecoratePlan` both
    carry it, so `finish` hands it on whole."""

    episodes: tuple[Episode, ...]
    new_episodes: tuple[Episode, ...]
    transitions: tuple[Transition, ...]
    note_ask_turns: tuple[int, int] | None
    # True only when this call's sleep faded the view; a sleep that met a fade in progress is owed instead.
    slept: bool
    sleep_owed: bool
    budget: Budget
    # The view (history in view plus facts block) as assembled, and as projected with leaving ones gone.
    view_tokens: int
    projected_view: int


@dataclass(frozen=True, kw_only=True)
class DecoratePlan(PlanCore):
    """The outcome of a decorate: the request to send, and every change the store must persist."""

    request: dict[str, Any]
    new_traces: tuple[Trace, ...]
    # Our count of the request as sent (the note ask and its tool only when asked), for the size ratio.
    estimated_tokens: int
    # This turn's recall block as placed (None: none), the items it holds, and the user message it stands before.
    recall_block: str | None = None
    recall_items: tuple[Recalled, ...] = ()
    recall_seq: int | None = None


@dataclass(frozen=True, kw_only=True)
class Decided(PlanCore):
    """A decorate's decisions, made before recall's answer is needed: what the store must persist (the cut, the
    transitions, the note ask, the sleep), and what `finish` needs to place this turn's recall block in the room
    kept for it and assemble the request. The names the store reads are `DecoratePlan`'s."""

    request: Mapping[str, Any]
    memory: StoredMemory
    # The request as sent without a new recall block (a tool loop's stored block counted).
    sent: int
    recall_seq: int | None
    # The room kept for a new user message's block (0: none is coming), or a tool loop's stored block.
    recall_room: int
    current: str | None
    blocks: Mapping[int, str]
    sizes: ViewSizes
    in_facts_block: frozenset[str]
    shown_in_view: frozenset[int]
    count: LetheText

    @property
    def new_traces(self) -> tuple[Trace, ...]:
        return tuple(encoding_trace(e) for e in self.new_episodes)
