"""Traces, activation and significance: how available an episode (or fact) is now, and how much it mattered.

activation = sum over counted traces of score / sqrt(max(1, minutes since the trace))
significance = sum over counted traces of score, never faded

An episode's encoding trace is stored with score 1; once the lane has judged the episode's salience, it counts
that much instead (`salient_traces`, engine/salience.py), unless salience is off.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from engine.episodes import Episode
from engine.salience import encoding_factor

__all__ = [
    "Trace",
    "activation",
    "encoding_trace",
    "episode_activations",
    "fact_activations",
    "salient_traces",
    "significance",
    "trace_weight",
]


@dataclass(frozen=True)
class Trace:
    """A dated judgment that an episode (or fact) was relevant. Rows are append-only: history is kept, not revised.

    `score` is stored exactly as the judge returned it; activation sums only traces marked `counted`.
    """

    at: datetime
    score: float
    counted: bool
    episode_id: str | None = None
    fact_id: str | None = None
    encoding: bool = False


def encoding_trace(episode: Episode) -> Trace:
    """The trace an episode is born with: weight 1.0, dated by its last message (not by when the cut ran)."""
    return Trace(at=episode.at, score=1.0, counted=True, episode_id=episode.id, encoding=True)


def trace_weight(age: timedelta) -> float:
    """Weight of a trace `age` old: 1.0 up to a minute, then 1/sqrt(age in minutes)."""
    minutes = age.total_seconds() / 60.0
    return 1.0 / math.sqrt(max(1.0, minutes))


def activation(traces: Iterable[Trace], now: datetime) -> float:
    """Sum over counted traces of score x `trace_weight(now - at)`."""
    return sum(t.score * trace_weight(now - t.at) for t in traces if t.counted)


def significance(traces: Iterable[Trace]) -> float:
    """The plain sum of counted traces: kept apart from activation, so leaving view is not unimportance."""
    return sum(t.score for t in traces if t.counted)


def salient_traces(episode: Episode, own: Iterable[Trace], *, salience: bool = True) -> list[Trace]:
    """An episode's own traces as activation and significance count them: its encoding trace implied when
    missing, and scaled by its salience once judged (with `salience` on)."""
    traces = list(own)
    if not any(t.encoding for t in traces):
        traces = [encoding_trace(episode), *traces]
    factor = encoding_factor(episode.salience, enabled=salience)
    if factor == 1.0:
        return traces
    return [replace(t, score=t.score * factor) if t.encoding else t for t in traces]


def episode_activations(
    episodes: Sequence[Episode], traces: Iterable[Trace], now: datetime, *, salience: bool = True
) -> dict[str, float]:
    """Activation of each episode; an episode whose encoding trace is missing gets it implied, and a judged
    one's encoding counts its salience (`salience=False`: every encoding counts 1).

    The same sums as `activation(salient_traces(...))`, term for term and in the same order, without building
    the scaled traces: every decorate plans with it, over every episode of a long memory."""
    by_episode: dict[str, list[Trace]] = {e.id: [] for e in episodes}
    for trace in traces:
        if trace.episode_id in by_episode:
            by_episode[trace.episode_id].append(trace)
    out: dict[str, float] = {}
    for episode in episodes:
        own = by_episode[episode.id]
        factor = encoding_factor(episode.salience, enabled=salience)
        total = 0.0
        if not any(t.encoding for t in own):
            total += factor * trace_weight(now - episode.at)
        for t in own:
            if t.counted:
                total += (t.score * factor if t.encoding else t.score) * trace_weight(now - t.at)
        out[episode.id] = total
    return out


def fact_activations(fact_ids: Iterable[str], traces: Iterable[Trace], now: datetime) -> Mapping[str, float]:
    """Activation per fact id, computed from the traces that name the fact, with the same decay."""
    totals: dict[str, float] = dict.fromkeys(fact_ids, 0.0)
    for trace in traces:
        fact_id = trace.fact_id
        if fact_id is not None and fact_id in totals and trace.counted:
            totals[fact_id] += trace.score * trace_weight(now - trace.at)
    return totals
