"""The ceiling, the budget and the landing: how much history the view may hold, and where a fade stops.

budget  = ceiling - what no fade can shrink - room for the next call (set aside once)
landing = min(half the budget, budget - two typical turns), never below the current user turn
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from engine.config import MechanismConfig
from engine.units import Unit

__all__ = [
    "Budget",
    "TurnMeasure",
    "budget_for",
    "corrected_ceiling",
    "history_budget",
    "landing",
    "measure_turns",
    "plan_budget",
]


@dataclass(frozen=True)
class TurnMeasure:
    """What recent closed turns show: a typical turn, and one assistant step with its outputs."""

    typical_turn: int
    room_for_next_call: int


@dataclass(frozen=True)
class Budget:
    """Everything one decision about the view is measured against, in estimated tokens."""

    ceiling: int
    fixed: int
    room_for_next_call: int
    typical_turn: int
    budget: int
    landing: int


def _percentile(values: Sequence[int], fraction: float) -> int:
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


# Out-of-view history a decorate or a cut still reads: measuring turns needs the recent ones, and
# `recent_turns` agent turns, tool calls included, fit in this many messages.
RECENT_MESSAGES = 400


def measure_turns(units: Sequence[Unit], *, turn_in_progress: int, config: MechanismConfig) -> TurnMeasure:
    """A typical turn is the median of recent closed turns (user message to the next one); room for the
    next call is a high percentile of what one call adds in them: a reply with its batch of tool outputs,
    or, for the first call of a turn, the user message with that reply."""
    closed = [u for u in units if 0 < u.turn < turn_in_progress]
    recent = set(sorted({u.turn for u in closed})[-config.recent_turns:])
    sizes: dict[int, int] = {}
    steps: list[int] = []
    previous: Unit | None = None
    for unit in closed:
        if unit.turn in recent:
            sizes[unit.turn] = sizes.get(unit.turn, 0) + unit.tokens
            if unit.kind == "step":
                opens_turn = previous is not None and previous.kind == "user" and previous.turn == unit.turn
                steps.append(unit.tokens + (previous.tokens if opens_turn and previous else 0))
        previous = unit
    typical = int(median(sizes.values())) if sizes else config.default_typical_turn
    room = _percentile(steps, config.room_percentile) if steps else config.default_room_for_next_call
    return TurnMeasure(typical_turn=typical, room_for_next_call=room)


def history_budget(ceiling: int, *, fixed: int, room_for_next_call: int) -> int:
    """What is left of the ceiling for the view once the unshrinkable part and one next call are set aside.

    One call's room, once: the view may pass the budget by at most that call before a fade starts, and a
    model that keeps ignoring the note ask meets the ceiling, which seals the leaving episodes without facts.
    """
    return max(0, ceiling - fixed - room_for_next_call)


def landing(budget: int, *, typical_turn: int, current_turn_tokens: int, fraction: float = 0.5) -> int:
    """Half the budget, lower when two typical turns would not fit before the next trigger, never below the
    current user turn (which is never forgotten)."""
    target = min(int(budget * fraction), budget - 2 * typical_turn)
    return max(current_turn_tokens, target, 0)


def plan_budget(
    *,
    fixed: int,
    measure: TurnMeasure,
    current_turn_tokens: int,
    config: MechanismConfig,
    ceiling: int | None = None,
) -> Budget:
    """The budget and landing for one request; `ceiling` overrides the configured one (already corrected)."""
    top = config.ceiling_tokens if ceiling is None else ceiling
    room = measure.room_for_next_call
    budget = history_budget(top, fixed=fixed, room_for_next_call=room)
    return Budget(
        ceiling=top,
        fixed=fixed,
        room_for_next_call=room,
        typical_turn=measure.typical_turn,
        budget=budget,
        landing=landing(
            budget,
            typical_turn=measure.typical_turn,
            current_turn_tokens=current_turn_tokens,
            fraction=config.landing_fraction,
        ),
    )


def corrected_ceiling(config: MechanismConfig, size_ratio: float | None) -> int:
    """The ceiling in our estimate's tokens: the provider counts `size_ratio` of its tokens per one of ours."""
    return int(config.ceiling_tokens / size_ratio) if size_ratio else config.ceiling_tokens


def budget_for(
    units: Sequence[Unit], *, turn: int, fixed: int, config: MechanismConfig, size_ratio: float | None = None
) -> Budget:
    """The budget of a memory whose history is `units` with `turn` in progress, for a request whose part no
    fade can shrink is `fixed`: the one routine the hot path and the lane both plan by."""
    return plan_budget(
        fixed=fixed,
        measure=measure_turns(units, turn_in_progress=turn, config=config),
        current_turn_tokens=sum(u.tokens for u in units if u.turn == turn) if turn > 0 else 0,
        config=config,
        ceiling=corrected_ceiling(config, size_ratio),
    )
