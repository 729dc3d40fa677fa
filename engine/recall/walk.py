"""The walk: the judge puts each candidate fact on one of four levels, reading it against the recent dialogue.
From a fact rated high enough the walk steps to the facts that share its entities, which is how a bridging fact
that only leads to the answer still makes it into the block. What ends at `keep` or higher is what recall
shows.

The loop is here once, pure: it takes "rate these facts" and "neighbours of these facts" as callables, so the
lane's prepared walk and the hot path's inline walk are the same walk. Facts reached by leading on are rated
with the facts that led to them (`via`): the answer to a two-hop question rarely looks relevant alone, but does
beside its bridge. A fact rated lower as a search hit is rated again when a bridge reaches it; it keeps the
higher level.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["CENTRAL", "RELEVANT", "TANGENTIAL", "UNRELATED", "WalkRules", "is_kept", "kept_in_order",
           "leads_on", "walk"]

# The four levels, as the judge's protocol numbers them.
UNRELATED, TANGENTIAL, RELEVANT, CENTRAL = 0, 1, 2, 3

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class WalkRules:
    """Which levels lead on and which are kept, how far the walk goes and how much it rates per step."""

    keep_level: int = RELEVANT
    lead_on_level: int = RELEVANT
    steps: int = 2
    per_step: int = 16

    def __post_init__(self) -> None:
        for name in ("keep_level", "lead_on_level"):
            if not UNRELATED <= getattr(self, name) <= CENTRAL:
                raise ValueError(f"{name} must be a level from {UNRELATED} to {CENTRAL}")
        if self.steps < 0 or self.per_step < 1:
            raise ValueError("steps must be at least 0 and per_step at least 1")


def leads_on(level: int, rules: WalkRules) -> bool:
    """A fact this relevant is worth following to the facts across its entities."""
    return level >= rules.lead_on_level


def is_kept(level: int, rules: WalkRules) -> bool:
    """A fact this relevant is shown."""
    return level >= rules.keep_level


async def walk(
    seeds: Sequence[K],
    *,
    rate: Callable[[Sequence[K], Sequence[K]], Awaitable[Sequence[int]]],
    neighbours: Callable[[Sequence[K]], Awaitable[Sequence[K]]],
    rules: WalkRules = WalkRules(),  # noqa: B008 - frozen
    known: Mapping[K, int] | None = None,
) -> dict[K, int]:
    """Every fact rated, with its level, in the order first reached. `known` holds levels already given
    (a prepared walk): those are not rated again, and their neighbours were already followed."""
    levels: dict[K, int] = dict(known or {})
    expanded: set[K] = set(levels)
    frontier = list(dict.fromkeys(k for k in seeds if k not in levels))[:rules.per_step]
    await _rate_into(levels, frontier, (), rate)
    leaders = [k for k in dict.fromkeys(seeds) if k in levels and k not in expanded and leads_on(levels[k], rules)]
    for _ in range(rules.steps):
        if not leaders:
            break
        expanded.update(leaders)
        # Not yet rated, or rated below the keep level on their own: the bridge may change that.
        reached = [k for k in dict.fromkeys(await neighbours(leaders))
                   if k not in expanded and not is_kept(levels.get(k, -1), rules)][:rules.per_step]
        await _rate_into(levels, reached, leaders, rate)
        leaders = [k for k in reached if k not in expanded and leads_on(levels[k], rules)]
    return levels


async def _rate_into(levels: dict[K, int], keys: Sequence[K], via: Sequence[K],
                     rate: Callable[[Sequence[K], Sequence[K]], Awaitable[Sequence[int]]]) -> None:
    if not keys:
        return
    rated = list(await rate(keys, via))
    if len(rated) != len(keys):
        raise ValueError(f"the judge rated {len(rated)} facts of {len(keys)}")
    for key, level in zip(keys, rated, strict=True):
        levels[key] = max(level, levels.get(key, level))


def kept_in_order(levels: Mapping[K, int], rules: WalkRules) -> list[K]:
    """The facts shown, highest level first, in the order reached among equals."""
    order = {k: i for i, k in enumerate(levels)}
    return sorted((k for k, level in levels.items() if is_kept(level, rules)), key=lambda k: (-levels[k], order[k]))
