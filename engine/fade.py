"""The fade plan and sleep: which episodes leave, least activated first, until the view reaches the landing.

The view a fade measures is the history in view plus the facts block. A live episode picked counts as gone
from the projection at once (its messages stay in view while it is leaving; its facts join when it seals);
a live episode whose facts are already written seals at once, trading its messages for its facts; a sealed
episode picked is forgotten, taking its facts out of the facts block. Fades never overlap: a plan is only
made when no episode is in the leaving state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from engine.episodes import Episode, EpisodeState, Transition, fade_step, seal_without_facts

__all__ = [
    "FadePlan",
    "apply_transitions",
    "ceiling_passed",
    "fade_in_progress",
    "plan_fade",
    "seal_leaving_without_facts",
    "should_sleep",
]


@dataclass(frozen=True)
class FadePlan:
    """The moves a fade makes, in the order it picked them, and the view it projects afterwards."""

    transitions: tuple[Transition, ...]
    projected_view: int
    reached_landing: bool


def fade_in_progress(episodes: Sequence[Episode]) -> bool:
    """True while some episode is leaving, i.e. the previous fade is still waiting for its note."""
    return any(e.state is EpisodeState.LEAVING for e in episodes)


def should_sleep(previous_user_at: datetime | None, now: datetime, *, sleep_after: timedelta) -> bool:
    """Whether the gap since the previous user message reaches `sleep_after` (then the view fades to the
    landing even when it is under budget)."""
    return previous_user_at is not None and now - previous_user_at >= sleep_after


def plan_fade(
    episodes: Sequence[Episode],
    *,
    activations: Mapping[str, float],
    view_tokens: int,
    landing: int,
    current_turn: int,
    facts_block_tokens: Callable[[frozenset[str]], int],
    reason: str = "fade",
) -> FadePlan:
    """Pick episodes least activated first until the projected view is at or below the landing.

    `facts_block_tokens(sealed_ids)` sizes the facts block when exactly those episodes are sealed, so the
    projection counts what a forget takes out and what an immediate seal puts in.
    """
    if fade_in_progress(episodes):
        return FadePlan(transitions=(), projected_view=view_tokens, reached_landing=view_tokens <= landing)
    sealed = frozenset(e.id for e in episodes if e.state is EpisodeState.SEALED)
    facts_now = facts_block_tokens(sealed)
    history = view_tokens - facts_now
    candidates = sorted(
        # The turn in progress never leaves; episodes are closed, but a caller's data is not trusted on it.
        (
            e
            for e in episodes
            if e.state in (EpisodeState.LIVE, EpisodeState.SEALED) and e.last_turn < current_turn
        ),
        key=lambda e: (activations.get(e.id, 0.0), e.first_seq),
    )
    transitions: list[Transition] = []
    projected = view_tokens
    for episode in candidates:
        if projected <= landing:
            break
        after = fade_step(episode)
        if episode.state is EpisodeState.LIVE:
            history -= episode.tokens
            if after.state is EpisodeState.SEALED:
                sealed = sealed | {episode.id}
        else:
            sealed = sealed - {episode.id}
        projected = history + facts_block_tokens(sealed)
        transitions.append(Transition(episode.id, episode.state, after.state, reason))
    return FadePlan(
        transitions=tuple(transitions), projected_view=projected, reached_landing=projected <= landing
    )


def ceiling_passed(request_tokens: int, ceiling: int) -> bool:
    """The ceiling is a hard limit on the whole request."""
    return request_tokens > ceiling


def seal_leaving_without_facts(episodes: Sequence[Episode]) -> tuple[Transition, ...]:
    """When the note ask keeps going unanswered and the ceiling is reached, every leaving episode seals
    anyway, marked as sealed without facts; its messages stay whole for recall and export."""
    return tuple(
        Transition(e.id, e.state, seal_without_facts(e).state, "ceiling")
        for e in episodes
        if e.state is EpisodeState.LEAVING
    )


def apply_transitions(episodes: Sequence[Episode], transitions: Sequence[Transition]) -> list[Episode]:
    """The episodes after a plan, each moved through the legal transition the plan names."""
    by_id = {t.episode_id: t for t in transitions}
    result: list[Episode] = []
    for episode in episodes:
        transition = by_id.get(episode.id)
        if transition is None:
            result.append(episode)
        elif transition.reason == "ceiling":
            result.append(seal_without_facts(episode))
        else:
            moved = fade_step(episode) if transition.reason in ("fade", "sleep") else None
            if moved is None or moved.state is not transition.after:
                raise ValueError(f"transition {transition} does not follow from episode {episode.id}")
            result.append(moved)
    return result
