"""The score floor: which search hits may enter a recall block without the walk's judge having rated them.

A search by meaning always has a nearest fact, so being first in a ranking proves nothing: a "thanks" has
neighbours too. Two gates keep such hits out. The message must touch the memory at all: its own words match
something, or something is near its meaning; a message that touches nothing lets no unrated hit in, so it gets
no block unless the judge kept something. And a hit enters only when its fused score is at least `relative` of
the best hit's of its kind, so the tail a search always fills goes.

Near its meaning is either of two things. The nearest fact or passage is within cosine `touch` of the message. Or
it is within the lower `stand_out` and leads the next nearest of its ranking by `lead` at least: a paraphrase
("who looks after the toggle backend?" of "Dana maintains the feature flag server") often comes no nearer than
small talk's best neighbour does, but small talk's neighbours come in a crowd, where a paraphrase's answer stands
clear of the rest. A lead is read only from a ranking of `LEAD_NEIGHBOURS` or more: among two or three facts any
nearest leads.

The numbers are set for the embedded MiniLM model, on conversations generated apart from the benchmarks' (other
seeds): questions about the memory's facts had a nearest fact at 0.36 or above, small talk at 0.28 or below;
paraphrased questions under 0.35 had their answer at 0.28 to 0.34 with a lead of 0.04 to 0.09, against 1,000 facts
small talk's nearest led by 0.02 or less in nine of ten messages. Another embedder may want its own
(`LETHE_RECALL_TOUCH_SIMILARITY`, `LETHE_RECALL_STAND_OUT_SIMILARITY`, `LETHE_RECALL_STAND_OUT_LEAD`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["LEAD_NEIGHBOURS", "ScoreFloor", "lead_of", "over_floor"]

K = TypeVar("K", bound=Hashable)

LEAD_NEIGHBOURS = 5


def lead_of(similarities: Sequence[float]) -> tuple[float, float] | None:
    """A ranking's nearest similarity and its lead over the next, best first; None for a ranking too short to
    say whether its nearest stands out."""
    if len(similarities) < LEAD_NEIGHBOURS:
        return None
    return similarities[0], similarities[0] - similarities[1]


@dataclass(frozen=True)
class ScoreFloor:
    """A hit's fused score against the best of its batch, and the similarity that counts as touching."""

    relative: float = 0.5
    touch: float = 0.35
    stand_out: float = 0.28
    lead: float = 0.03

    def __post_init__(self) -> None:
        if not 0.0 <= self.relative <= 1.0:
            raise ValueError("relative must be from 0 to 1")
        for name in ("touch", "stand_out"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be a cosine similarity, from -1 to 1")
        if not 0.0 <= self.lead <= 2.0:
            raise ValueError("lead must be a difference of cosine similarities, from 0 to 2")

    def touches(self, *, worded: bool, nearest: float | None,
                leads: Sequence[tuple[float, float]] = ()) -> bool:
        """Whether the message touches the memory: a match of its own words, something within `touch` of its
        meaning, or a nearest within `stand_out` that leads its ranking by `lead` (`leads`: each ranking's
        nearest and its lead, `lead_of`)."""
        if worded or (nearest is not None and nearest >= self.touch):
            return True
        return any(near >= self.stand_out and ahead >= self.lead for near, ahead in leads)


def over_floor(scored: Sequence[tuple[K, float]], floor: ScoreFloor) -> list[K]:
    """The keys, in their order, whose score is at least `floor.relative` of the best score among them."""
    if not scored:
        return []
    best = max(score for _, score in scored)
    return [key for key, score in scored if score >= floor.relative * best]
