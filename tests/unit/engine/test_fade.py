from __future__ import annotations

from datetime import timedelta

from engine.episodes import EpisodeState, Transition
from engine.fade import (
    apply_transitions,
    ceiling_passed,
    fade_in_progress,
    plan_fade,
    seal_leaving_without_facts,
    should_sleep,
)
from tests.unit.engine.conversations import T0, episode

LIVE, LEAVING, SEALED, FORGOTTEN = EpisodeState


def no_facts(_: frozenset[str]) -> int:
    return 0


def three_live() -> list:
    return [
        episode(LIVE, id="a", first_seq=1, last_seq=2, last_turn=1, tokens=300),
        episode(LIVE, id="b", first_seq=3, last_seq=4, last_turn=2, tokens=300),
        episode(LIVE, id="c", first_seq=5, last_seq=6, last_turn=3, tokens=300),
    ]


def test_plan_fade_least_activated_first_until_landing() -> None:
    plan = plan_fade(
        three_live(),
        activations={"a": 0.5, "b": 0.1, "c": 0.9},
        view_tokens=1_000,
        landing=500,
        current_turn=4,
        facts_block_tokens=no_facts,
    )
    assert [t.episode_id for t in plan.transitions] == ["b", "a"]
    assert all(t.after is LEAVING for t in plan.transitions)
    assert plan.projected_view == 400 and plan.reached_landing


def test_plan_fade_one_fade_at_a_time() -> None:
    episodes = three_live()
    episodes[0] = episode(LEAVING, id="a", first_seq=1, last_seq=2, last_turn=1, tokens=300)
    assert fade_in_progress(episodes)
    plan = plan_fade(
        episodes, activations={}, view_tokens=1_000, landing=100, current_turn=4, facts_block_tokens=no_facts
    )
    assert plan.transitions == ()


def test_plan_fade_never_takes_the_current_turn() -> None:
    episodes = three_live()
    plan = plan_fade(
        episodes, activations={}, view_tokens=1_000, landing=0, current_turn=3, facts_block_tokens=no_facts
    )
    assert "c" not in {t.episode_id for t in plan.transitions}
    assert not plan.reached_landing


def test_plan_fade_live_with_facts_seals_at_once_and_counts_its_facts() -> None:
    episodes = [episode(LIVE, id="a", tokens=300, facts_written=True)]
    plan = plan_fade(
        episodes,
        activations={},
        view_tokens=400,
        landing=200,
        current_turn=9,
        facts_block_tokens=lambda sealed: 50 if "a" in sealed else 0,
    )
    assert plan.transitions == (Transition("a", LIVE, SEALED, "fade"),)
    assert plan.projected_view == 150


def test_plan_fade_forgetting_a_sealed_episode_takes_its_facts_out() -> None:
    episodes = [
        episode(SEALED, id="s", first_seq=1, last_seq=2, tokens=300),
        episode(LIVE, id="l", first_seq=3, last_seq=4, tokens=100),
    ]
    plan = plan_fade(
        episodes,
        activations={"s": 0.01, "l": 1.0},
        view_tokens=180,
        landing=120,
        current_turn=9,
        facts_block_tokens=lambda sealed: 80 if "s" in sealed else 0,
    )
    assert plan.transitions == (Transition("s", SEALED, FORGOTTEN, "fade"),)
    assert plan.projected_view == 100


def test_should_sleep_after_24_hours() -> None:
    day = timedelta(hours=24)
    assert should_sleep(T0, T0 + day, sleep_after=day)
    assert not should_sleep(T0, T0 + day - timedelta(seconds=1), sleep_after=day)
    assert not should_sleep(None, T0, sleep_after=day)


def test_seal_leaving_without_facts_when_the_ceiling_is_passed() -> None:
    episodes = [episode(LEAVING, id="x"), episode(LIVE, id="y")]
    assert ceiling_passed(201, 200) and not ceiling_passed(200, 200)
    transitions = seal_leaving_without_facts(episodes)
    assert transitions == (Transition("x", LEAVING, SEALED, "ceiling"),)
    after = apply_transitions(episodes, transitions)
    assert after[0].state is SEALED and after[0].sealed_without_facts
    assert after[1].state is LIVE
