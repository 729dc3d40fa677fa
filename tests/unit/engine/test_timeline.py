from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.timeline import activation_series, sample_times, span
from engine.traces import Trace, episode_activations
from tests.unit.engine.conversations import T0, episode


def test_sample_times_include_both_ends_evenly() -> None:
    times = sample_times(T0, T0 + timedelta(minutes=10), 6)
    assert times[0] == T0 and times[-1] == T0 + timedelta(minutes=10)
    assert {b - a for a, b in zip(times, times[1:], strict=False)} == {timedelta(minutes=2)}
    assert sample_times(T0, T0, 5) == [T0]


def test_sample_times_refuse_a_backwards_window() -> None:
    with pytest.raises(ValueError):
        sample_times(T0, T0 - timedelta(seconds=1), 3)


def test_an_episode_has_no_activation_before_its_messages() -> None:
    later = episode(id="e2", at=T0 + timedelta(minutes=5))
    series = activation_series([episode(), later], [], sample_times(T0, T0 + timedelta(minutes=9), 4))
    assert series["e2"][:2] == [None, None] and None not in series["e2"][2:]
    assert series["e1"][0] == 1.0  # its encoding trace, at full strength in its first minute


def test_a_trace_counts_only_from_when_it_was_written() -> None:
    fact_trace = Trace(at=T0 + timedelta(hours=1), score=0.8, counted=True, episode_id="e1", fact_id="f1")
    times = [T0 + timedelta(minutes=59), T0 + timedelta(hours=1)]
    before, after = activation_series([episode()], [fact_trace], times)["e1"]
    assert after == pytest.approx(before + 0.8, abs=0.01)


def test_span_runs_from_the_first_episode_to_now() -> None:
    now = T0 + timedelta(days=1)
    assert span([episode(at=T0 + timedelta(hours=2)), episode(id="e2")], now) == (T0, now)
    assert span([], now) == (now - timedelta(minutes=1), now)


minutes = st.integers(min_value=0, max_value=60 * 48)


@given(st.lists(minutes, min_size=1, max_size=5), st.lists(st.tuples(st.integers(0, 4), minutes,
                                                                    st.floats(0.0, 1.0)), max_size=12))
def test_the_series_ends_where_decorate_would_rank_episodes_now(births: list[int], judged: list[tuple]) -> None:
    episodes = [episode(id=f"e{i}", at=T0 + timedelta(minutes=m)) for i, m in enumerate(births)]
    traces = [Trace(at=T0 + timedelta(minutes=m), score=s, counted=True, episode_id=f"e{i % len(births)}")
              for i, m, s in judged]
    now = T0 + timedelta(days=3)
    series = activation_series(episodes, traces, sample_times(T0, now, 9))
    expected = episode_activations(episodes, traces, now)
    for e in episodes:
        assert series[e.id][-1] == pytest.approx(expected[e.id])
        assert all(v is None or v >= 0 for v in series[e.id])
