"""Salience: the tone baseline, salience = max(act's floor, intensity), the encoding trace it scales, and off
meaning every encoding counts 1 as before."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.episodes import EpisodeState, start_leaving
from engine.fade import plan_fade
from engine.planning import StoredMemory
from engine.salience import (
    ACT_FLOORS,
    MAX_SALIENCE,
    MIN_SALIENCE,
    Act,
    encoding_factor,
    salience,
    weigh_episodes,
)
from engine.timeline import activation_series
from engine.tone import ToneBaseline, intensity, tone_of
from engine.traces import Trace, activation, encoding_trace, episode_activations, salient_traces, significance
from tests.unit.engine.conversations import T0, episode, plan_call, request
from tests.unit.engine.test_decorate import faded_once

TERSE = ["ok", "send the report", "fine", "check the logs", "yes", "next item", "ship the fix", "sounds right"]
SHOUTED = ["OK", "SEND THE REPORT", "FINE", "CHECK THE LOGS", "YES", "NEXT ITEM", "SHIP THE FIX", "SOUNDS RIGHT"]


def _baseline(messages: list[str]) -> ToneBaseline:
    baseline = ToneBaseline()
    for seq, text in enumerate(messages, start=1):
        baseline = baseline.fold(tone_of(text), seq=seq)
    return baseline


def test_capitals_from_a_terse_person_are_a_spike() -> None:
    felt = intensity(_baseline(TERSE), [tone_of("STOP DEPLOYING THE BRANCH")])
    assert felt == 1.0


def test_capitals_from_a_person_who_always_writes_in_capitals_are_their_normal() -> None:
    felt = intensity(_baseline(SHOUTED), [tone_of("STOP DEPLOYING THE BRANCH")])
    assert felt == 0.0


def test_a_terse_persons_usual_message_is_calm() -> None:
    assert intensity(_baseline(TERSE), [tone_of("check the build")]) == 0.0


def test_exclamations_and_intensifiers_from_a_calm_person_count() -> None:
    calm = _baseline(TERSE)
    assert intensity(calm, [tone_of("this is absolutely unacceptable, never again!!!")]) > 0.5


def test_a_message_folded_twice_counts_once() -> None:
    once = _baseline(TERSE)
    assert once.fold(tone_of("EVERYTHING IS BROKEN"), seq=3) == once
    assert once.messages == len(TERSE)


def test_no_user_message_means_no_intensity() -> None:
    assert intensity(ToneBaseline(), []) == 0.0


@pytest.mark.parametrize("act", list(Act))
def test_salience_is_the_higher_of_the_acts_floor_and_the_intensity(act: Act) -> None:
    assert salience(act, 0.0) == ACT_FLOORS[act]
    assert salience(act, 1.0) == 1.0
    assert salience(act, 0.6) == max(ACT_FLOORS[act], 0.6)


def test_a_correction_said_flatly_stays_heavy_and_a_lookup_starts_low() -> None:
    assert salience(Act.CORRECTION, 0.0) == 1.0
    assert salience(Act.LOOKUP, 0.0) < salience(Act.TASK, 0.0) < salience(Act.CORRECTION, 0.0)
    # ...unless the lookup was said forcefully.
    assert salience(Act.LOOKUP, 0.95) == 0.95


@given(st.sampled_from(list(Act)), st.floats(allow_nan=True, allow_infinity=True))
def test_salience_stays_within_its_range(act: Act, felt: float) -> None:
    assert MIN_SALIENCE <= salience(act, felt) <= MAX_SALIENCE
    assert 0.0 < MIN_SALIENCE


def test_the_encoding_trace_is_scaled_by_salience() -> None:
    judged = episode(salience=0.25)
    assert episode_activations([judged], [encoding_trace(judged)], T0)[judged.id] == pytest.approx(0.25)
    # Four minutes on, a quarter at half weight; the stored trace still says 1.
    later = T0 + timedelta(minutes=4)
    assert episode_activations([judged], [], later)[judged.id] == pytest.approx(0.125)
    assert encoding_trace(judged).score == 1.0
    # A fact's trace is not scaled: use is rewarded as before.
    fact = Trace(at=later, score=0.8, counted=True, episode_id=judged.id, fact_id="f1")
    assert episode_activations([judged], [fact], later)[judged.id] == pytest.approx(0.125 + 0.8)
    assert significance(salient_traces(judged, [fact])) == pytest.approx(0.25 + 0.8)


def test_until_judged_the_encoding_counts_one() -> None:
    unjudged = episode()
    assert episode_activations([unjudged], [], T0)[unjudged.id] == 1.0
    assert encoding_factor(None, enabled=True) == 1.0


def test_salience_off_means_every_encoding_counts_one() -> None:
    judged = episode(salience=0.25)
    assert episode_activations([judged], [], T0, salience=False)[judged.id] == 1.0
    assert encoding_factor(0.25, enabled=False) == 1.0


def test_a_routine_lookup_fades_before_a_correction_of_the_same_age() -> None:
    lookup = episode(id="lookup", first_seq=1, last_seq=2, last_turn=1, salience=salience(Act.LOOKUP, 0.0))
    correction = episode(id="fix", first_seq=3, last_seq=4, last_turn=2, salience=salience(Act.CORRECTION, 0.0))
    # The correction is even the older of the two: salience, not age, puts the lookup first.
    correction = replace(correction, at=T0 - timedelta(minutes=30))
    now = T0 + timedelta(hours=2)
    activations = episode_activations([lookup, correction], [], now)
    assert activations["lookup"] < activations["fix"]
    plan = plan_fade([lookup, correction], activations=activations, view_tokens=200, landing=150, current_turn=3,
                     facts_block_tokens=lambda sealed: 0)
    assert [t.episode_id for t in plan.transitions] == ["lookup"]


def test_weighing_judges_each_episode_against_the_tone_before_it_and_moves_the_baseline_on() -> None:
    tones = [(seq, tone_of(text)) for seq, text in enumerate(TERSE, start=1)]
    tones.append((20, tone_of("WHERE IS THE INVOICE")))
    calm = episode(id="calm", first_seq=1, last_seq=len(TERSE))
    loud = episode(id="loud", first_seq=20, last_seq=21)
    weighed, after = weigh_episodes([loud, calm], [Act.LOOKUP, Act.LOOKUP], tones, ToneBaseline())
    by_id = {w.episode_id: w for w in weighed}
    assert by_id["calm"].salience == ACT_FLOORS[Act.LOOKUP]
    assert by_id["loud"].intensity == 1.0 and by_id["loud"].salience == 1.0
    assert after.through_seq == 20 and after.messages == len(TERSE) + 1
    # Weighed again from the baseline it left (a retry after the save): nothing is folded twice.
    _, again = weigh_episodes([loud], [Act.LOOKUP], tones, after)
    assert again == after


SALIENCES = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(SALIENCES, st.integers(0, 10_000), st.lists(
    st.tuples(st.integers(0, 10_000), st.floats(0.0, 1.0), st.booleans()), max_size=3)), min_size=1, max_size=6),
    st.integers(0, 20_000))
def test_salience_off_gives_exactly_todays_activations(
    specs: list[tuple[float | None, int, list[tuple[int, float, bool]]]], minutes: int
) -> None:
    episodes, traces = [], []
    for i, (stored, at, facts) in enumerate(specs):
        e = episode(id=f"e{i}", first_seq=2 * i + 1, last_seq=2 * i + 2, at=T0 + timedelta(minutes=at),
                    salience=stored)
        episodes.append(e)
        if i % 2:
            traces.append(encoding_trace(e))
        traces += [Trace(at=T0 + timedelta(minutes=m), score=s, counted=c, episode_id=e.id, fact_id=f"f{i}{m}")
                   for m, s, c in facts]
    now = T0 + timedelta(minutes=minutes)
    today = [replace(e, salience=None) for e in episodes]
    assert episode_activations(episodes, traces, now, salience=False) == episode_activations(today, traces, now)
    times = [T0, now]
    assert activation_series(episodes, traces, times, salience=False) == activation_series(today, traces, times)
    # On, a judged encoding only ever lowers activation, never below MIN_SALIENCE of it.
    on, off = episode_activations(episodes, traces, now), episode_activations(today, traces, now)
    for e in episodes:
        assert on[e.id] <= off[e.id] + 1e-12
        assert on[e.id] > 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(SALIENCES, st.integers(0, 10_000), st.booleans(), st.lists(
    st.tuples(st.integers(0, 10_000), st.floats(0.0, 1.0), st.booleans(), st.booleans()), max_size=4)),
    min_size=1, max_size=6), st.integers(0, 20_000), st.booleans())
def test_episode_activations_are_the_activation_of_each_episodes_salient_traces(
    specs: list[tuple[float | None, int, bool, list[tuple[int, float, bool, bool]]]], minutes: int, on: bool
) -> None:
    episodes, traces = [], []
    for i, (stored, at, encoded, own) in enumerate(specs):
        e = episode(id=f"e{i}", first_seq=2 * i + 1, last_seq=2 * i + 2, at=T0 + timedelta(minutes=at),
                    salience=stored)
        episodes.append(e)
        if encoded:
            traces.append(encoding_trace(e))
        traces += [Trace(at=T0 + timedelta(minutes=m), score=s, counted=c, episode_id=e.id, encoding=enc)
                   for m, s, c, enc in own]
    traces.append(Trace(at=T0, score=1.0, counted=True, episode_id="not-among-them"))
    now = T0 + timedelta(minutes=minutes)
    by_definition = {e.id: activation(salient_traces(e, [t for t in traces if t.episode_id == e.id], salience=on),
                                      now) for e in episodes}
    assert episode_activations(episodes, traces, now, salience=on) == by_definition


def test_a_state_change_keeps_the_salience() -> None:
    assert start_leaving(episode(EpisodeState.LIVE, salience=0.4)).salience == 0.4


def test_acronyms_and_identifiers_are_not_shouting() -> None:
    assert tone_of("What's the status of ticket LTH-1042 in the API?")["capitals"] == 0.0
    assert tone_of("STOP")["capitals"] == 1.0
    assert tone_of("please STOP DOING that")["capitals"] == 0.5


def test_decorate_fades_a_routine_lookup_before_an_older_correction_and_off_it_does_not() -> None:
    items, messages, config, first = faded_once()
    cut = sorted(first.new_episodes, key=lambda e: e.first_seq)
    assert len(cut) >= 3
    # The oldest episode was a correction; every later one a routine lookup.
    judged = [replace(e, salience=salience(Act.CORRECTION if i == 0 else Act.LOOKUP, 0.0))
              for i, e in enumerate(cut)]
    memory = StoredMemory(messages, episodes=judged, traces=[encoding_trace(e) for e in judged])
    now = messages[-1].at + timedelta(hours=1)

    def picked(on: bool) -> list[str]:
        plan = plan_call(request("chat_completions", items), memory, now=now, config=replace(config, salience=on))
        return [t.episode_id for t in plan.transitions]

    assert picked(False)[0] == cut[0].id  # today: the oldest goes first
    assert cut[0].id not in picked(True)[:1]  # salience: the correction outlasts the newer lookups
