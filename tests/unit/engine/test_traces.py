from __future__ import annotations

from datetime import timedelta

import pytest

from engine.traces import (
    Trace,
    activation,
    encoding_trace,
    episode_activations,
    fact_activations,
    significance,
    trace_weight,
)
from tests.unit.engine.conversations import T0, episode


def test_trace_weight_full_for_the_first_minute() -> None:
    assert trace_weight(timedelta(seconds=0)) == 1.0
    assert trace_weight(timedelta(seconds=59)) == 1.0
    assert trace_weight(timedelta(minutes=1)) == 1.0


def test_trace_weight_half_at_four_minutes() -> None:
    assert trace_weight(timedelta(minutes=4)) == pytest.approx(0.5)


def test_trace_weight_about_a_thirty_eighth_at_a_day() -> None:
    assert trace_weight(timedelta(days=1)) == pytest.approx(1 / 38, rel=0.01)
    assert trace_weight(timedelta(hours=1)) == pytest.approx(0.13, abs=0.005)


def test_activation_sums_counted_traces_only() -> None:
    traces = [
        Trace(at=T0, score=1.0, counted=True),
        Trace(at=T0 - timedelta(minutes=3), score=0.8, counted=True),
        Trace(at=T0, score=0.9, counted=False),
    ]
    assert activation(traces, T0 + timedelta(minutes=1)) == pytest.approx(1.0 + 0.8 / 2)


def test_significance_is_the_plain_sum_of_counted_traces() -> None:
    traces = [Trace(at=T0, score=1.0, counted=True), Trace(at=T0, score=0.7, counted=True)]
    traces.append(Trace(at=T0, score=0.95, counted=False))
    assert significance(traces) == pytest.approx(1.7)


def test_encoding_trace_full_strength_at_the_episode_time() -> None:
    trace = encoding_trace(episode(at=T0))
    assert (trace.score, trace.counted, trace.at, trace.encoding) == (1.0, True, T0, True)


def test_episode_activations_imply_a_missing_encoding_trace() -> None:
    e = episode()
    later = T0 + timedelta(minutes=4)
    assert episode_activations([e], [], later)[e.id] == pytest.approx(0.5)
    extra = Trace(at=later, score=0.6, counted=True, episode_id=e.id)
    assert episode_activations([e], [encoding_trace(e), extra], later)[e.id] == pytest.approx(1.1)


def test_fact_activations_use_the_facts_own_traces() -> None:
    traces = [
        Trace(at=T0, score=1.0, counted=True, fact_id="f1"),
        Trace(at=T0, score=1.0, counted=False, fact_id="f2"),
    ]
    result = fact_activations(["f1", "f2", "f3"], traces, T0 + timedelta(minutes=16))
    assert result == {"f1": pytest.approx(0.25), "f2": 0.0, "f3": 0.0}
