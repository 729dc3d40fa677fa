"""The score floor: which search hits may enter a recall block without the walk's judge having rated them.

A search by meaning always has a nearest fact, so being first in a ranking proves nothing: a "thanks" has
neighbours too. Two gates keep such hits out. The message must touch the memory at all: its own words match
something, or something is near its meaning (cosine similarity at least `touch`); a message that touches nothing
lets no unrated hit in, so it gets no block unless the judge kept something. And a hit enters only when its fused
score is at least `relative` of the best hit's of its kind, so the tail a search always fills goes.

The similarity gate is set for the embedded MiniLM model, on a conversation generated for it apart from the
benchmarks': questions about the memory's facts had a nearest fact at 0.36 or above, small talk at 0.28 or below.
Another embedder may want its own (`LETHE_RECALL_TOUCH_SIMILARITY`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["ScoreFloor", "over_floor"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class ScoreFloor:
    """A hit's fused score against the best of its batch, and the similarity that counts as touching."""

    relative: float = 0.5
    touch: float = 0.35

    def __post_init__(self) -> None:
        if not 0.0 <= self.relative <= 1.0:
            raise ValueError("relative must be from 0 to 1")
        if not -1.0 <= self.touch <= 1.0:
            raise ValueError("touch must be a cosine similarity, from -1 to 1")

    def touches(self, *, worded: bool, nearest: float | None) -> bool:
        """Whether the message touches the memory: a match of its own words, or something near its meaning."""
        return worded or (nearest is not None and nearest >= self.touch)


def over_floor(scored: Sequence[tuple[K, float]], floor: ScoreFloor) -> list[K]:
    """The keys, in their order, whose score is at least `floor.relative` of the best score among them."""
    if not scored:
        return []
    best = max(score for _, score in scored)
    return [key for key, score in scored if score >= floor.relative * best]
