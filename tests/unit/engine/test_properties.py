"""Properties over random conversations with tool calls, in both request shapes."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from contracts.errors import OverCeiling
from engine.assembly import repair_history
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores, cut
from engine.episodes import EpisodeState, acknowledge
from engine.facts import Fact
from engine.fade import plan_fade
from engine.messages import StoredMessage, answered_call_id, call_ids, instruction_items
from engine.planning import StoredMemory, visible_messages
from engine.request_rules import problems
from engine.sizing import estimate_tokens
from engine.traces import Trace
from engine.units import number_turns, split_units
from tests.unit.engine.conversations import T0, episode, plan_call, request, turn

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def conversations(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], list[int]]:
    """A shape, the history items (last turn possibly still in a tool loop), and minutes before each item."""
    shape = draw(st.sampled_from(["chat_completions", "responses"]))
    turns = draw(st.integers(1, 9))
    items: list[dict[str, Any]] = []
    for index in range(1, turns + 1):
        calls = draw(st.lists(st.integers(0, 3), max_size=3))
        text = "x" * draw(st.integers(0, 300))
        closed = index < turns or draw(st.booleans())
        items += turn(index, shape, calls=calls, text=text, closed=closed)  # type: ignore[arg-type]
    gaps = draw(st.lists(st.sampled_from([0, 1, 5, 60, 600, 1500]), min_size=len(items), max_size=len(items)))
    return shape, items, gaps


def store(items: list[dict[str, Any]], gaps: list[int]) -> list[StoredMessage]:
    turns = number_turns(items)
    at, messages = T0, []
    for seq, (item, gap) in enumerate(zip(items, gaps, strict=True), start=1):
        at += timedelta(minutes=gap)
        messages.append(StoredMessage(seq, turns[seq - 1], at, item, estimate_tokens(item)))
    return messages


@FAST
@given(conversations())
def test_units_never_separate_a_call_from_its_output(
    conversation: tuple[str, list[dict[str, Any]], list[int]],
) -> None:
    _, items, _ = conversation
    spans = split_units(items)
    assert [i for s, e, _ in spans for i in range(s, e)] == list(range(len(items)))
    unit_of = {i: n for n, (s, e, _) in enumerate(spans) for i in range(s, e)}
    calls = {c: unit_of[i] for i, item in enumerate(items) for c in call_ids(item)}
    for index, item in enumerate(items):
        answered = answered_call_id(item)
        if answered is not None:
            assert calls[answered] == unit_of[index]


@SLOW
@given(conversations(), st.integers(1_000, 6_000), st.randoms(use_true_random=False))
def test_decorate_over_a_conversation_keeps_every_rule(
    conversation: tuple[str, list[dict[str, Any]], list[int]], ceiling: int, rng: Any
) -> None:
    shape, items, gaps = conversation
    config = MechanismConfig(
        ceiling_tokens=ceiling, default_room_for_next_call=150, default_typical_turn=100, episode_max_floor=60
    )
    starts = [i for i, item in enumerate(items) if item.get("role") == "user"] + [len(items)]
    episodes: tuple = ()
    facts: list[Fact] = []
    traces: list[Trace] = []
    for end in starts[1:]:
        messages = store(items[:end], gaps[:end])
        now = messages[-1].at
        turn_now = messages[-1].turn
        try:
            result = plan_call(
                request(shape, items[:end]),
                StoredMemory(messages, episodes=episodes, facts=facts, traces=traces),
                now=now,
                config=config,
            )
        except OverCeiling as refused:
            # Refused only when the turn in progress and the instructions alone pass the ceiling.
            sent = request(shape, items[:end])
            skeleton = {k: v for k, v in sent.items() if k not in ("messages", "input")}
            skeleton["instructions_items"] = instruction_items(sent)
            in_turn = sum(m.tokens for m in messages if m.turn == turn_now)
            fixed = estimate_tokens(json.dumps(skeleton, ensure_ascii=False))
            assert refused.tokens > ceiling and in_turn + fixed > ceiling
            event("refused: turn over the ceiling")
            return
        assembled = result.request["messages" if shape == "chat_completions" else "input"]
        # The request as sent, counted again from what is sent, never passes the ceiling.
        assert result.estimated_tokens <= result.budget.ceiling

        # Every assembled request is one a provider accepts.
        assert problems(result.request) == []
        # Nothing in view needed repair: whole units leave, so no call is separated from its output.
        shown = visible_messages(messages, result.episodes)
        assert [m for m in assembled if m in [s.body for s in shown]] == [s.body for s in shown]
        # The current user turn never leaves the view.
        assert all(m.seq in {s.seq for s in shown} for m in messages if m.turn == turn_now)
        assert all(e.last_turn < turn_now for e in result.episodes)
        # A fade ends at or below the landing unless only the current turn is left to take.
        if any(t.reason in ("fade", "sleep") for t in result.transitions):
            takeable = [
                e
                for e in result.episodes
                if e.state in (EpisodeState.LIVE, EpisodeState.SEALED) and e.last_turn < turn_now
            ]
            assert result.projected_view <= result.budget.landing or not takeable
        # One fade at a time: a fade starts only once every episode that was leaving has sealed.
        if any(t.reason in ("fade", "sleep") for t in result.transitions):
            ended = {t.episode_id for t in result.transitions if t.reason in ("seal", "ceiling")}
            assert {e.id for e in episodes if e.state is EpisodeState.LEAVING} <= ended

        for reason in sorted({t.reason for t in result.transitions}):
            event(f"transition: {reason}")
        traces += result.new_traces
        episodes = result.episodes
        leaving = [e for e in episodes if e.state is EpisodeState.LEAVING]
        if leaving and rng.random() < 0.6:  # the model answers the note ask, or ignores it
            facts.append(
                Fact(
                    id=f"f{len(facts)}",
                    note=f"Fact {len(facts)} about turns {leaving[0].first_turn}.",
                    subject=f"entity {len(facts) % 3}",
                    object="result",
                    milestone=rng.random() < 0.3,
                    episode_ids=tuple(e.id for e in leaving),
                    at=now,
                    first_turn=leaving[0].first_turn,
                    last_turn=leaving[-1].last_turn,
                )
            )
            episodes = tuple(acknowledge(e) if e.state is EpisodeState.LEAVING else e for e in episodes)


@FAST
@given(
    st.lists(st.tuples(st.integers(1, 300), st.floats(0, 1), st.floats(0, 1)), max_size=40),
    st.integers(1, 800),
    st.integers(1, 3),
)
def test_cut_leaves_no_episode_over_the_maximum_where_a_legal_split_exists(
    units: list[tuple[int, float, float]], max_tokens: int, min_units: int
) -> None:
    sizes = [u[0] for u in units]
    scores = [BoundaryScores(first=u[1], last=u[2]) for u in units]
    ranges = cut(sizes, scores, max_tokens=max_tokens, min_units=min_units)
    assert [i for s, e in ranges for i in range(s, e)] == list(range(len(units)))
    for start, end in ranges:
        assert end - start >= min(min_units, len(units))
        if sum(sizes[start:end]) > max_tokens:
            assert end - start < 2 * min_units  # no split would leave both sides big enough


@FAST
@given(
    st.lists(
        st.tuples(st.sampled_from(list(EpisodeState)), st.integers(1, 500), st.floats(0, 5), st.booleans()),
        max_size=20,
    ),
    st.integers(0, 4_000),
)
def test_fade_ends_at_or_below_the_landing_unless_nothing_is_left(
    specs: list[tuple[EpisodeState, int, float, bool]], landing: int
) -> None:
    episodes = [
        episode(state, id=f"e{i}", first_seq=i, last_seq=i, last_turn=i, tokens=tokens, facts_written=written)
        for i, (state, tokens, _, written) in enumerate(specs)
    ]
    facts_of = {e.id: 10 for e in episodes}

    def facts_block(sealed: frozenset[str]) -> int:
        return sum(facts_of[i] for i in sealed)

    in_view = sum(e.tokens for e in episodes if e.in_view)
    sealed = frozenset(e.id for e in episodes if e.state is EpisodeState.SEALED)
    current = 50
    plan = plan_fade(
        episodes,
        activations={f"e{i}": s[2] for i, s in enumerate(specs)},
        view_tokens=in_view + current + facts_block(sealed),
        landing=landing,
        current_turn=len(specs),
        facts_block_tokens=facts_block,
    )
    if any(e.state is EpisodeState.LEAVING for e in episodes):
        assert plan.transitions == ()
        return
    picked = {t.episode_id for t in plan.transitions}
    left = [e for e in episodes if e.id not in picked and e.state in (EpisodeState.LIVE, EpisodeState.SEALED)]
    assert plan.projected_view <= landing or not left
    activations = {f"e{i}": s[2] for i, s in enumerate(specs)}
    order = [activations[t.episode_id] for t in plan.transitions]
    assert order == sorted(order)


@FAST
@given(conversations(), st.data())
def test_repair_history_always_yields_a_valid_request(
    conversation: tuple[str, list[dict[str, Any]], list[int]], data: st.DataObject
) -> None:
    shape, items, _ = conversation
    kept = [item for item in items if data.draw(st.booleans())]
    shuffled = data.draw(st.permutations(kept)) if data.draw(st.booleans()) else kept
    repaired = repair_history([dict(i) for i in shuffled], shape)  # type: ignore[arg-type]
    if repaired:
        key = "messages" if shape == "chat_completions" else "input"
        assert problems({key: repaired}) == []
    # A history that was valid is left as it was.
    whole = request(shape, items)
    key = "messages" if shape == "chat_completions" else "input"
    assert repair_history(list(items), shape) == items  # type: ignore[arg-type]
    assert problems(replace_items(whole, key)) == []


def replace_items(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {**body, key: list(body[key])}
