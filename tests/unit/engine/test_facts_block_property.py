"""The facts block a decorate assembles holds exactly the facts of sealed episodes, most active first."""

from __future__ import annotations

import math
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.config import MechanismConfig
from engine.episodes import EpisodeState
from engine.facts import Fact
from engine.planning import StoredMemory
from engine.traces import Trace
from tests.unit.engine.conversations import T0, episode, plan_call, request, stored, turn

STATES = [EpisodeState.LIVE, EpisodeState.LEAVING, EpisodeState.SEALED, EpisodeState.FORGOTTEN]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(STATES), min_size=1, max_size=6),
    st.lists(st.tuples(st.sets(st.integers(0, 5), min_size=1, max_size=3),
                       st.lists(st.tuples(st.integers(0, 600), st.floats(0.1, 1.0)), max_size=3)),
             max_size=8),
)
def test_facts_block_is_the_facts_of_sealed_episodes_most_active_first(
    states: list[EpisodeState], drawn: list[tuple[set[int], list[tuple[int, float]]]]
) -> None:
    items = [item for index in range(1, len(states) + 2) for item in turn(index, closed=index <= len(states))]
    messages = stored(items)
    # Episode i holds turn i + 1: two messages each (question and answer).
    episodes = [episode(state, id=f"e{i}", first_seq=2 * i + 1, last_seq=2 * i + 2, first_turn=i + 1,
                        last_turn=i + 1, facts_written=state is not EpisodeState.LIVE)
                for i, state in enumerate(states)]
    now = messages[-1].at
    facts, traces = [], []
    for number, (owners, marks) in enumerate(drawn):
        keys = tuple(f"e{i}" for i in sorted(owners) if i < len(states)) or ("e0",)
        facts.append(Fact(id=f"f{number}", note=f"Fact number {number} holds.", subject=f"s{number}",
                          object=f"o{number}", milestone=False, episode_ids=keys, at=T0, first_turn=1,
                          last_turn=1))
        traces += [Trace(at=now - timedelta(minutes=minutes), score=score, counted=True, fact_id=f"f{number}")
                   for minutes, score in marks]
    roomy = MechanismConfig(ceiling_tokens=1_000_000)
    result = plan_call(request("chat_completions", items),
                       StoredMemory(messages, episodes=episodes, facts=facts, traces=traces),
                      now=now, config=roomy)

    sealed = {e.id for e in result.episodes if e.state is EpisodeState.SEALED}
    expected = [f for f in facts if sealed & set(f.episode_ids)]

    def activation(fact: Fact) -> float:  # counted from the traces here, not by the engine's own function
        return sum(t.score / math.sqrt(max(1.0, (now - t.at).total_seconds() / 60))
                   for t in traces if t.fact_id == fact.id)

    blocks = [m["content"] for m in result.request["messages"]
              if m["role"] == "system" and m["content"].startswith("Facts kept from")]
    if not expected:
        assert blocks == []
        return
    lines = [line for line in blocks[0].splitlines() if line.startswith("- ")]
    shown = [line.removeprefix("- ").split(" [")[0] for line in lines]
    assert sorted(shown) == sorted(f.note for f in expected)
    by_note = {f.note: f for f in expected}
    weights = [activation(by_note[note]) for note in shown]
    assert all(a >= b - 1e-9 for a, b in zip(weights, weights[1:], strict=False))
