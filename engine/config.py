"""The mechanism's tunables, passed in by the caller: the engine never reads settings itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta

from engine.ceilings import ceiling_for
from engine.recall.walk import RELEVANT, WalkRules

__all__ = ["MechanismConfig"]


@dataclass(frozen=True)
class MechanismConfig:
    """Every number the mechanism uses, with the defaults the seed implies."""

    # The ceiling: a 200k-token window, unless the model the request goes to has its own below (`for_model`).
    ceiling_tokens: int = 200_000
    # Model name -> ceiling (matched as `engine.ceilings.match_model` does): the ceilings the deployment names,
    # then the known context windows below `ceiling_tokens` (`engine.context_windows`).
    model_ceilings: tuple[tuple[str, int], ...] = ()
    known_ceilings: tuple[tuple[str, int], ...] = ()
    # A user message after this much silence sleeps before the reply.
    sleep_after: timedelta = timedelta(hours=24)
    # A conversation of a user this long without a user message goes quiet (the idle gate, issue #37).
    user_idle: timedelta = timedelta(minutes=30)
    # The landing sits at this share of the budget unless two typical turns would not fit above it.
    landing_fraction: float = 0.5
    # An episode may be at most this share of the budget, so a fade can pick finely...
    episode_max_fraction: float = 1 / 16
    # ...but never so small that ordinary turns cannot be whole episodes.
    episode_max_floor: int = 512
    # The smallest episode, in units.
    episode_min_units: int = 1
    # Salience (engine/salience.py): a judged episode's encoding trace counts its salience, so a routine lookup
    # fades sooner and a correction lasts; off, every encoding counts 1 and the lane judges no acts.
    salience: bool = True
    # How many recent closed turns measure a typical turn and the room for the next call.
    recent_turns: int = 20
    # Room for the next call is this percentile of recent assistant steps (tool outputs plus reply).
    room_percentile: float = 0.9
    # Defaults for a memory too new to have closed turns.
    default_typical_turn: int = 2_000
    default_room_for_next_call: int = 8_000
    # A provider-to-estimate ratio outside this range is treated as a measuring accident.
    plausible_ratio: tuple[float, float] = field(default=(0.5, 2.0))
    # Recall: the block's most tokens (part of what no fade shrinks on its turn), the walk's keep and lead-on
    # levels (0 unrelated, 1 tangential, 2 relevant, 3 central), how many steps it walks and rates per step.
    recall_block_tokens: int = 1_200
    # ...and never more than this share of the ceiling, so a small context is not crowded by what it recalls.
    recall_block_max_fraction: float = 1 / 16
    # A message that asks about the past (`engine.recall.asking`) gets a larger block: what it asks for is most
    # likely out of view, and an answer needs the records themselves.
    recall_question_block_tokens: int = 2_400
    recall_question_block_max_fraction: float = 1 / 6
    # Earlier turns' blocks still in view hold at most this share of the landing (so of any request after a
    # fade), the newest kept: a conversation of questions would otherwise fill its view with what was recalled
    # for the questions before.
    recall_blocks_max_share: float = 1 / 4
    recall_keep_level: int = RELEVANT
    recall_lead_on_level: int = RELEVANT
    recall_walk_steps: int = 2
    recall_walk_per_step: int = 16
    # Claim kinds weigh in what stays in front of the model (engine.claims): constraints out of view keep a room
    # of their own in the facts block, constraints and corrections go first among equals. Off: a constraint fades
    # like any fact (the bench's comparison).
    claim_kinds: bool = True

    def for_model(self, model: str | None, tenant_ceilings: Mapping[str, int] | None = None) -> MechanismConfig:
        """This config with the ceiling of the model a request goes to: the tenant's own table first, then the
        deployment's, then the known windows, else `ceiling_tokens`."""
        ceiling = ceiling_for(model, default=self.ceiling_tokens,
                              tables=(tenant_ceilings or {}, dict(self.model_ceilings), dict(self.known_ceilings)))
        return self if ceiling == self.ceiling_tokens else replace(self, ceiling_tokens=ceiling)

    def walk_rules(self) -> WalkRules:
        return WalkRules(keep_level=self.recall_keep_level, lead_on_level=self.recall_lead_on_level,
                         steps=self.recall_walk_steps, per_step=self.recall_walk_per_step)

    def episode_max(self, budget: int) -> int:
        """The largest episode the cutter may leave, for a history budget."""
        return max(self.episode_max_floor, int(budget * self.episode_max_fraction))
