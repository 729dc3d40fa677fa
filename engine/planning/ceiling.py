"""Sealing at the ceiling: the ceiling is hard, so leaving episodes seal (facts written or not) to stay under it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from engine.episodes import Episode, EpisodeState, Transition, seal
from engine.fade import apply_transitions, ceiling_passed, fade_in_progress, seal_leaving_without_facts
from engine.planning.view import ViewSizes

__all__ = ["seal_acknowledged", "seal_if_past_ceiling", "seal_picked_past_ceiling"]


def seal_picked_past_ceiling(episodes: list[Episode], picked: Sequence[Transition], fixed: int,
                             sizes: ViewSizes, ceiling: int) -> list[Transition]:
    """When the episodes a fade just picked would hold the request past the ceiling (a long history arriving in
    one call), the fewest of them seal without facts, least active first, so the rest can still be asked."""
    forced: list[Transition] = []
    for transition in picked:
        if not ceiling_passed(fixed + sizes.of(episodes), ceiling):
            break
        if transition.after is EpisodeState.LEAVING:
            forced.append(Transition(transition.episode_id, EpisodeState.LEAVING, EpisodeState.SEALED, "ceiling"))
            episodes[:] = apply_transitions(episodes, forced[-1:])
    return forced


def seal_acknowledged(episodes: list[Episode], turn: int) -> list[Transition]:
    """Leaving episodes whose facts are written seal once their last turn is over (in place)."""
    transitions = []
    for index, episode in enumerate(episodes):
        if episode.state is EpisodeState.LEAVING and episode.facts_written and episode.last_turn < turn:
            episodes[index] = seal(episode, current_turn=turn)
            transitions.append(Transition(episode.id, EpisodeState.LEAVING, EpisodeState.SEALED, "seal"))
    return transitions


def seal_if_past_ceiling(episodes: list[Episode], fixed: int, sizes: ViewSizes, ceiling: int,
                         activations_of: Callable[[list[Episode]], Mapping[str, float]]) -> list[Transition]:
    """Leaving episodes that would carry the request past the ceiling seal without their facts: the fewest of
    them, least active first, so the note ask goes on for the rest (one ignored ask costs as little as it can).
    `activations_of` gives the episodes' activations, asked for only when some must seal."""
    if not (fade_in_progress(episodes) and ceiling_passed(fixed + sizes.of(episodes), ceiling)):
        return []
    activations = activations_of(episodes)
    awaiting = sorted((e for e in episodes if e.state is EpisodeState.LEAVING and not e.facts_written),
                      key=lambda e: (activations.get(e.id, 0.0), e.first_seq))
    forced: list[Transition] = []
    for episode in awaiting:
        if not ceiling_passed(fixed + sizes.of(episodes), ceiling):
            break
        forced.append(Transition(episode.id, EpisodeState.LEAVING, EpisodeState.SEALED, "ceiling"))
        episodes[:] = apply_transitions(episodes, forced[-1:])
    if ceiling_passed(fixed + sizes.of(episodes), ceiling):  # written facts still waiting for their turn to end
        rest = list(seal_leaving_without_facts(episodes))
        episodes[:] = apply_transitions(episodes, rest)
        forced += rest
    return forced
