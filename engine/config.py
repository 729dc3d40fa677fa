"""The mechanism's tunables, passed in by the caller: the engine never reads settings itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

__all__ = ["MechanismConfig"]


@dataclass(frozen=True)
class MechanismConfig:
    """Every number the mechanism uses, with the defaults the seed implies."""

    # The ceiling is ours and the same for everyone: a 200k-token window.
    ceiling_tokens: int = 200_000
    # A user message after this much silence sleeps before the reply.
    sleep_after: timedelta = timedelta(hours=24)
    # The landing sits at this share of the budget unless two typical turns would not fit above it.
    landing_fraction: float = 0.5
    # An episode may be at most this share of the budget, so a fade can pick finely...
    episode_max_fraction: float = 1 / 16
    # ...but never so small that ordinary turns cannot be whole episodes.
    episode_max_floor: int = 512
    # The smallest episode, in units.
    episode_min_units: int = 1
    # How many recent closed turns measure a typical turn and the room for the next call.
    recent_turns: int = 20
    # Room for the next call is this percentile of recent assistant steps (tool outputs plus reply).
    room_percentile: float = 0.9
    # Defaults for a memory too new to have closed turns.
    default_typical_turn: int = 2_000
    default_room_for_next_call: int = 8_000
    # A provider-to-estimate ratio outside this range is treated as a measuring accident.
    plausible_ratio: tuple[float, float] = field(default=(0.5, 2.0))

    def episode_max(self, budget: int) -> int:
        """The largest episode the cutter may leave, for a history budget."""
        return max(self.episode_max_floor, int(budget * self.episode_max_fraction))
