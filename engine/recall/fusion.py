"""Reciprocal rank fusion: several rankings of the same things made into one.

Why RRF: the searches recall fuses do not score on one scale. `ts_rank` with an exact-identifier bonus, a
cosine similarity, and searches run on different texts (the whole message, each part, the recent dialogue)
give numbers that cannot be added or compared; calibrating them would need labelled data per memory and per
embedder. RRF uses ranks alone, needs no calibration, and rewards what several searches agree on: a hit high in
one list, or fair in several, comes first (Cormack, Clarke and Büttcher, 2009; k = 60 as there).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

__all__ = ["RRF_K", "fuse"]

RRF_K = 60
K = TypeVar("K", bound=Hashable)


def fuse(rankings: Iterable[Sequence[K]], *, k: int = RRF_K, limit: int | None = None) -> list[tuple[K, float]]:
    """(key, score) best first; a key's score is the sum over rankings of 1 / (k + its rank), ranks from 1.
    Ties keep the order in which keys were first seen, so the result is deterministic."""
    scores: dict[K, float] = {}
    for ranking in rankings:
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:  # a key twice in one ranking counts once, at its best rank
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = {key: i for i, key in enumerate(scores)}
    fused = sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))
    return fused if limit is None else fused[:limit]
