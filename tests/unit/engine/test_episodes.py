from __future__ import annotations

import pytest

from contracts.errors import IllegalTransition
from engine.episodes import (
    EpisodeState,
    acknowledge,
    fade_step,
    forget,
    seal,
    seal_without_facts,
    start_leaving,
)
from tests.unit.engine.conversations import episode


def test_start_leaving_live_becomes_leaving() -> None:
    assert start_leaving(episode()).state is EpisodeState.LEAVING


def test_start_leaving_with_facts_written_seals_at_once() -> None:
    assert start_leaving(episode(facts_written=True)).state is EpisodeState.SEALED


def test_seal_needs_facts_and_a_finished_last_turn() -> None:
    leaving = start_leaving(episode())
    with pytest.raises(IllegalTransition):
        seal(leaving, current_turn=3)
    acked = acknowledge(leaving)
    with pytest.raises(IllegalTransition):
        seal(acked, current_turn=2)
    assert seal(acked, current_turn=3).state is EpisodeState.SEALED


def test_seal_without_facts_marks_the_episode() -> None:
    sealed = seal_without_facts(start_leaving(episode()))
    assert sealed.state is EpisodeState.SEALED and sealed.sealed_without_facts


def test_forget_only_from_sealed() -> None:
    with pytest.raises(IllegalTransition):
        forget(episode())
    assert forget(episode(EpisodeState.SEALED)).state is EpisodeState.FORGOTTEN


@pytest.mark.parametrize("state", [EpisodeState.LEAVING, EpisodeState.FORGOTTEN])
def test_fade_step_refuses_leaving_and_forgotten(state: EpisodeState) -> None:
    with pytest.raises(IllegalTransition):
        fade_step(episode(state))


def test_fade_step_live_leaves_sealed_is_forgotten() -> None:
    assert fade_step(episode()).state is EpisodeState.LEAVING
    assert fade_step(episode(EpisodeState.SEALED)).state is EpisodeState.FORGOTTEN


@pytest.mark.parametrize("state", [EpisodeState.LIVE, EpisodeState.SEALED, EpisodeState.FORGOTTEN])
def test_acknowledge_only_leaving(state: EpisodeState) -> None:
    with pytest.raises(IllegalTransition):
        acknowledge(episode(state))


def test_in_view_is_live_or_leaving() -> None:
    assert [episode(s).in_view for s in EpisodeState] == [True, True, False, False]
