"""Turning closed history into episodes: token sizes fix how many pieces, boundary scores fix where they part.

The judge gives every unit two numbers (how much it opens a topic, how much it closes one). Only their ranks
matter: the gap before unit i scores rank(i as opener) + rank(i-1 as closer), lower being better. A piece
larger than the maximum is divided at its best gap that keeps `min_units` on each side, recursively, until
each piece fits or cannot be divided further.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.episodes import Episode, EpisodeState
from engine.units import Unit, closed_units

__all__ = [
    "BoundaryScores",
    "boundary_ranks",
    "covered_prefix",
    "cut",
    "cut_closed",
    "cut_stretch",
    "judged_prefix",
    "uncut_runs",
]


@dataclass(frozen=True)
class BoundaryScores:
    """The judge's view of one unit: how strongly it opens a topic (`first`) and closes one (`last`)."""

    first: float
    last: float


def _ranks(values: Sequence[float]) -> list[float]:
    # Rank 0 is the strongest; ties share their mean rank, so equal scores favour no side.
    order = sorted(range(len(values)), key=lambda i: -values[i])
    ranks = [0.0] * len(values)
    position = 0
    while position < len(order):
        end = position
        while end + 1 < len(order) and values[order[end + 1]] == values[order[position]]:
            end += 1
        for k in range(position, end + 1):
            ranks[order[k]] = (position + end) / 2
        position = end + 1
    return ranks


def boundary_ranks(scores: Sequence[BoundaryScores]) -> list[float]:
    """For each boundary before unit i (i >= 1), its combined rank: lower is a better place to cut."""
    firsts = _ranks([s.first for s in scores])
    lasts = _ranks([s.last for s in scores])
    return [0.0] + [firsts[i] + lasts[i - 1] for i in range(1, len(scores))]


def cut(
    sizes: Sequence[int],
    scores: Sequence[BoundaryScores],
    *,
    max_tokens: int,
    min_units: int = 1,
) -> list[tuple[int, int]]:
    """Split units (by index) into episodes as [start, end) ranges that cover them all, in order."""
    if len(sizes) != len(scores):
        raise ValueError("every unit needs its boundary scores")
    if min_units < 1:
        raise ValueError("an episode holds at least one unit")
    ranks = boundary_ranks(scores)
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    episodes: list[tuple[int, int]] = []
    stack = [(0, len(sizes))] if sizes else []
    while stack:
        start, end = stack.pop()
        candidates = range(start + min_units, end - min_units + 1)
        if prefix[end] - prefix[start] <= max_tokens or not candidates:
            episodes.append((start, end))
            continue
        middle = (prefix[start] + prefix[end]) / 2
        # Ties in rank go to the most even split in tokens, then to the earlier boundary.
        best = min(candidates, key=lambda b: (ranks[b], abs(prefix[b] - middle), b))
        stack.append((best, end))
        stack.append((start, best))
    return sorted(episodes)


def cut_stretch(
    units: Sequence[Unit],
    *,
    scores: Mapping[int, BoundaryScores],
    max_tokens: int,
    min_units: int = 1,
    id_prefix: str = "ep",
) -> list[Episode]:
    """Cut closed, uncut units into new live episodes; a unit without scores is judged neutral."""
    if not units:
        return []
    neutral = BoundaryScores(first=0.0, last=0.0)
    ranges = cut(
        [u.tokens for u in units],
        [scores.get(u.first_seq, neutral) for u in units],
        max_tokens=max_tokens,
        min_units=min_units,
    )
    return [
        Episode(
            id=f"{id_prefix}-{units[start].first_seq}-{units[end - 1].last_seq}",
            state=EpisodeState.LIVE,
            first_seq=units[start].first_seq,
            last_seq=units[end - 1].last_seq,
            first_turn=units[start].turn,
            last_turn=units[end - 1].turn,
            tokens=sum(u.tokens for u in units[start:end]),
            at=units[end - 1].at,
        )
        for start, end in ranges
    ]


def uncut_runs(units: Sequence[Unit], episodes: Sequence[Episode]) -> list[list[Unit]]:
    """Stretches of units no episode holds yet, each cut on its own."""
    # Episodes never overlap, so one binary search per unit finds the only one that could hold it.
    spans = sorted((e.first_seq, e.last_seq) for e in episodes)
    starts = [first for first, _ in spans]
    runs: list[list[Unit]] = [[]]
    for unit in units:
        index = bisect_right(starts, unit.first_seq) - 1
        if index >= 0 and unit.first_seq <= spans[index][1]:
            runs.append([])
        else:
            runs[-1].append(unit)
    return [run for run in runs if run]


def covered_prefix(episodes: Sequence[Episode]) -> int:
    """The last seq up to which episodes cover history without a gap (0 if the first message is uncut):
    nothing at or before it is ever cut again."""
    covered = 0
    for first, last in sorted((e.first_seq, e.last_seq) for e in episodes):
        if first > covered + 1:
            break
        covered = max(covered, last)
    return covered


def judged_prefix(run: Sequence[Unit], scores: Mapping[int, BoundaryScores]) -> list[Unit]:
    """The start of an uncut stretch up to its first unit the judge has not scored yet."""
    for index, unit in enumerate(run):
        if unit.first_seq not in scores:
            return list(run[:index])
    return list(run)


def cut_closed(
    units: Sequence[Unit],
    episodes: Sequence[Episode],
    *,
    turn: int,
    scores: Mapping[int, BoundaryScores],
    max_tokens: int,
    min_units: int = 1,
    judged_only: bool = True,
) -> list[Episode]:
    """New live episodes from the closed history no episode holds yet: the one cut the hot path and the lane
    both make. With `judged_only`, each stretch is cut only as far as the judge has scored it; the rest waits
    for the lane (docs/cutting.md). Without it, unscored units count as neutral and only sizes decide."""
    new: list[Episode] = []
    for run in uncut_runs(closed_units(units, turn), episodes):
        ready = judged_prefix(run, scores) if judged_only else run
        new += cut_stretch(ready, scores=scores, max_tokens=max_tokens, min_units=min_units)
    return new
