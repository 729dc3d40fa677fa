"""Activation over time: what `episode_activations` (the function decorate ranks episodes by) said at each moment.

At a moment t only what existed by then counts: episodes whose messages had happened and traces written by t.
Before its messages an episode has no activation (None), not a made-up one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine.episodes import Episode
from engine.traces import Trace, episode_activations

__all__ = ["activation_series", "sample_times", "span"]


def sample_times(start: datetime, end: datetime, points: int) -> list[datetime]:
    """`points` moments from `start` to `end`, both included, evenly spaced (one point when they are equal)."""
    if points < 1:
        raise ValueError("points must be at least 1")
    if end < start:
        raise ValueError("end must not be before start")
    if points == 1 or end == start:
        return [end]
    step = (end - start) / (points - 1)
    return [start + step * i for i in range(points - 1)] + [end]


def activation_series(
    episodes: Sequence[Episode], traces: Iterable[Trace], times: Sequence[datetime], *, salience: bool = True
) -> dict[str, list[float | None]]:
    """Each episode's activation at each of `times`, as decorate would have computed it then (a judged
    episode's salience counted from its start: it scales the encoding, stamped with the episode's time)."""
    ordered = sorted(traces, key=lambda t: t.at)
    stamps = [t.at for t in ordered]
    series: dict[str, list[float | None]] = {e.id: [] for e in episodes}
    for moment in times:
        existing = [e for e in episodes if e.at <= moment]
        known = ordered[:bisect_right(stamps, moment)]
        values = episode_activations(existing, known, moment, salience=salience) if existing else {}
        for episode in episodes:
            series[episode.id].append(values.get(episode.id))
    return series


def span(episodes: Sequence[Episode], now: datetime) -> tuple[datetime, datetime]:
    """The natural window of a plot: from the first episode's messages to now (a minute at least)."""
    start = min((e.at for e in episodes), default=now)
    return min(start, now - timedelta(minutes=1)), now
