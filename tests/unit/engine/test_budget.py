from __future__ import annotations

from engine.budget import history_budget, landing, measure_turns, plan_budget
from engine.config import MechanismConfig
from engine.units import units_of
from tests.unit.engine.conversations import stored, turn


def test_history_budget_sets_the_next_call_aside_once() -> None:
    assert history_budget(200_000, fixed=20_000, room_for_next_call=10_000) == 170_000
    assert history_budget(1_000, fixed=2_000, room_for_next_call=0) == 0


def test_landing_is_half_the_budget() -> None:
    assert landing(100_000, typical_turn=10_000, current_turn_tokens=1_000) == 50_000


def test_landing_lower_when_two_typical_turns_would_not_fit() -> None:
    # Two turns of 30k between a landing at 50k and the trigger at 100k would not fit: land at 40k.
    assert landing(100_000, typical_turn=30_000, current_turn_tokens=1_000) == 40_000


def test_landing_never_below_the_current_user_turn() -> None:
    assert landing(100_000, typical_turn=30_000, current_turn_tokens=45_000) == 45_000
    assert landing(10_000, typical_turn=30_000, current_turn_tokens=0) == 0


def test_measure_turns_defaults_for_a_new_memory() -> None:
    config = MechanismConfig()
    measure = measure_turns(units_of(stored(turn(1, closed=False))), turn_in_progress=1, config=config)
    assert measure.typical_turn == config.default_typical_turn
    assert measure.room_for_next_call == config.default_room_for_next_call


def test_measure_turns_from_recent_closed_turns() -> None:
    messages = stored([*turn(1, calls=[1]), *turn(2, calls=[3]), *turn(3, closed=False, text="x" * 4000)])
    units = units_of(messages)
    measure = measure_turns(units, turn_in_progress=3, config=MechanismConfig(room_percentile=1.0))
    sizes = [sum(m.tokens for m in messages if m.turn == t) for t in (1, 2)]
    assert measure.typical_turn == int(sum(sizes) / 2)
    # The first call of a turn adds the user message and the reply; later calls add a reply with its outputs.
    closed = [u for u in units if u.turn < 3]
    biggest = max(
        [u.tokens for u in closed if u.kind == "step"]
        + [a.tokens + b.tokens for a, b in zip(closed, closed[1:], strict=False)
           if a.kind == "user" and b.kind == "step"]
    )
    assert measure.room_for_next_call == biggest


def test_plan_budget_reports_every_part() -> None:
    config = MechanismConfig(ceiling_tokens=100_000)
    measure = measure_turns([], turn_in_progress=1, config=config)
    budget = plan_budget(fixed=2_000, measure=measure, current_turn_tokens=500, config=config)
    assert budget.budget == 100_000 - 2_000 - config.default_room_for_next_call
    assert budget.landing == budget.budget // 2
    assert (
        plan_budget(fixed=0, measure=measure, current_turn_tokens=0, config=config, ceiling=50_000).ceiling
        == 50_000
    )


def test_episode_max_is_a_small_fraction_of_the_budget() -> None:
    config = MechanismConfig()
    assert config.episode_max(160_000) == 10_000
    assert config.episode_max(1_000) == config.episode_max_floor
