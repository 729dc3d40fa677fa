"""Episodes and their four states, with the only moves the mechanism allows between them.

    live ──pick──▶ leaving ──facts written, last turn over──▶ sealed ──pick──▶ forgotten
      └──pick, facts already written──────────────────────────▶ sealed
    leaving ──ceiling passed while the note ask is unanswered──▶ sealed (without facts)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from contracts.errors import IllegalTransition

__all__ = [
    "Episode",
    "EpisodeState",
    "Transition",
    "acknowledge",
    "fade_step",
    "forget",
    "hidden_spans",
    "merged_spans",
    "seal",
    "seal_without_facts",
    "start_leaving",
]


class EpisodeState(StrEnum):
    LIVE = "live"
    LEAVING = "leaving"
    SEALED = "sealed"
    FORGOTTEN = "forgotten"


@dataclass(frozen=True)
class Episode:
    """A stretch of history about one concept: whole units, identified by their seq range."""

    id: str
    state: EpisodeState
    first_seq: int
    last_seq: int
    first_turn: int
    last_turn: int
    tokens: int
    # When its messages happened: the encoding trace is stamped with this.
    at: datetime
    # Set when a note answering its ask was accepted; sealing follows at the first call past its last turn.
    facts_written: bool = False
    # Sealed because the ceiling was reached while the note ask went unanswered.
    sealed_without_facts: bool = False
    # Its salience once the lane has judged it (engine.salience): scales its encoding trace; None until then.
    salience: float | None = None

    @property
    def in_view(self) -> bool:
        """Live and leaving episodes keep their messages in the model's view."""
        return self.state in (EpisodeState.LIVE, EpisodeState.LEAVING)

    def holds(self, seq: int) -> bool:
        return self.first_seq <= seq <= self.last_seq


@dataclass(frozen=True)
class Transition:
    """One change of state, as the plan reports it to the caller who persists it."""

    episode_id: str
    before: EpisodeState
    after: EpisodeState
    reason: str


def _require(episode: Episode, allowed: EpisodeState, move: str) -> None:
    if episode.state is not allowed:
        raise IllegalTransition(f"episode {episode.id} is {episode.state}; only a {allowed} one can {move}")


def start_leaving(episode: Episode) -> Episode:
    """A live episode picked by a fade: it starts leaving, or seals at once when its facts are in."""
    _require(episode, EpisodeState.LIVE, "start leaving")
    if episode.facts_written:
        return replace(episode, state=EpisodeState.SEALED)
    return replace(episode, state=EpisodeState.LEAVING)


def acknowledge(episode: Episode) -> Episode:
    """The note call holding a leaving episode's facts was taken."""
    _require(episode, EpisodeState.LEAVING, "be acknowledged")
    return replace(episode, facts_written=True)


def seal(episode: Episode, *, current_turn: int) -> Episode:
    """Leaving -> sealed, for an episode whose note was taken and whose turns are all in the past: from now on
    the model sees its facts instead of its messages."""
    _require(episode, EpisodeState.LEAVING, "seal")
    if not episode.facts_written:
        raise IllegalTransition(f"episode {episode.id} has no facts written yet; it cannot seal")
    if episode.last_turn >= current_turn:
        raise IllegalTransition(f"episode {episode.id} ends in turn {episode.last_turn}, which is not over")
    return replace(episode, state=EpisodeState.SEALED)


def seal_without_facts(episode: Episode) -> Episode:
    """The ceiling is a hard limit: a leaving episode whose note never came seals anyway, marked so."""
    _require(episode, EpisodeState.LEAVING, "seal without facts")
    return replace(episode, state=EpisodeState.SEALED, sealed_without_facts=not episode.facts_written)


def forget(episode: Episode) -> Episode:
    """Sealed -> forgotten: its facts drop out of the facts block, while every row stays stored."""
    _require(episode, EpisodeState.SEALED, "be forgotten")
    return replace(episode, state=EpisodeState.FORGOTTEN)


def fade_step(episode: Episode) -> Episode:
    """What a fade does to the episode it picks: one order serves live and sealed episodes alike."""
    if episode.state is EpisodeState.LIVE:
        return start_leaving(episode)
    if episode.state is EpisodeState.SEALED:
        return forget(episode)
    raise IllegalTransition(f"episode {episode.id} is {episode.state}; a fade picks only live or sealed ones")


def merged_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first seq, last seq) spans sorted and joined where they meet: a long memory's thousands of forgotten
    episodes, side by side in its history, become a few spans."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def hidden_spans(episodes: Iterable[Episode]) -> list[tuple[int, int]]:
    """The spans of history out of view: sealed and forgotten episodes, joined where they meet."""
    return merged_spans((e.first_seq, e.last_seq) for e in episodes if not e.in_view)
