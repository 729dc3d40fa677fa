"""Traces, activation and significance: how available an episode (or fact) is now, and how much it mattered.

activation = sum over counted traces of score / sqrt(max(1, minutes since the trace))
significance = sum over counted traces of score, never faded
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from engine.episodes import Episode

__all__ = [
    "Trace",
    "activation",
    "encoding_trace",
    "episode_activations",
    "fact_activations",
    "significance",
    "trace_weight",
]


@dataclass(frozen=True)
class Trace:
    """One time something mattered to an episode: never edited, so the record of what mattered is permanent.

    The raw score is kept as the judge gave it; only a counted trace (a yes) adds to activation.
    """

    at: datetime
    score: float
    counted: bool
    episode_id: str | None = None
    fact_id: str | None = None
    encoding: bool = False


def encoding_trace(episode: Episode) -> Trace:
    """A new episode's first trace: full strength, at the time its messages happened."""
    return Trace(at=episode.at, score=1.0, counted=True, episode_id=episode.id, encoding=True)


def trace_weight(age: timedelta) -> float:
    """A trace counts in full for its first minute, then by one over the square root of the minutes."""
    minutes = age.total_seconds() / 60.0
    return 1.0 / math.sqrt(max(1.0, minutes))


def activation(traces: Iterable[Trace], now: datetime) -> float:
    """The sum of counted traces, each faded by the square root of its age in wall-clock minutes."""
    return sum(t.score * trace_weight(now - t.at) for t in traces if t.counted)


def significance(traces: Iterable[Trace]) -> float:
    """The plain sum of counted traces: kept apart from activation, so leaving view is not unimportance."""
    return sum(t.score for t in traces if t.counted)


def episode_activations(
    episodes: Sequence[Episode], traces: Iterable[Trace], now: datetime
) -> dict[str, float]:
    """Activation of each episode; an episode whose encoding trace is missing gets it implied."""
    by_episode: dict[str, list[Trace]] = {e.id: [] for e in episodes}
    for trace in traces:
        if trace.episode_id in by_episode:
            by_episode[trace.episode_id].append(trace)
    result: dict[str, float] = {}
    for episode in episodes:
        own = by_episode[episode.id]
        if not any(t.encoding for t in own):
            own = [encoding_trace(episode), *own]
        result[episode.id] = activation(own, now)
    return result


def fact_activations(fact_ids: Iterable[str], traces: Iterable[Trace], now: datetime) -> Mapping[str, float]:
    """A fact's activation from its own counted traces, faded the same way."""
    totals: dict[str, float] = dict.fromkeys(fact_ids, 0.0)
    for trace in traces:
        fact_id = trace.fact_id
        if fact_id is not None and fact_id in totals and trace.counted:
            totals[fact_id] += trace.score * trace_weight(now - trace.at)
    return totals
