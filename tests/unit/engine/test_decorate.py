from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contracts.errors import OverCeiling
from engine.blocks.note_ask import render_note_ask
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores
from engine.episodes import Episode, EpisodeState, acknowledge, hidden_spans
from engine.facts import Fact
from engine.messages import StoredMessage
from engine.planning import (
    DecoratePlan,
    StoredMemory,
    in_view_and_recent,
    visible_messages,
)
from engine.request_rules import problems
from engine.sizing import estimate_tokens
from tests.unit.engine.conversations import T0, plan_call, reply, request, stored, turn, user

# Just above what the long conversation's fade needs with its note ask (which explains sources and kinds).
SMALL = MechanismConfig(
    ceiling_tokens=3_780, default_room_for_next_call=200, default_typical_turn=100, episode_max_floor=100
)


def long_conversation(turns: int = 12, shape: str = "chat_completions") -> list[dict]:
    items: list[dict] = []
    for index in range(1, turns):
        items += turn(index, shape, calls=[1], text="x" * 200)  # type: ignore[arg-type]
    return items + turn(turns, shape, closed=False)  # type: ignore[arg-type]


def faded_once() -> tuple[list[dict], list[StoredMessage], MechanismConfig, DecoratePlan]:
    """A long conversation decorated under a ceiling just above it: over the budget (so it fades) but not
    past the ceiling, so the picked episodes stay leaving."""
    items = long_conversation()
    messages = stored(items)
    probe = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL)
    config = replace(SMALL, ceiling_tokens=probe.budget.fixed + probe.view_tokens + 1)
    return items, messages, config, plan_call(request("chat_completions", items),
                                              StoredMemory(messages), now=messages[-1].at,
                                             config=config)


def test_decorate_small_history_changes_nothing() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    result = plan_call(request("chat_completions", items), StoredMemory(stored(items)), now=T0 + timedelta(minutes=5))
    assert result.transitions == () and result.note_ask_turns is None
    assert result.request["messages"][1:] == items
    assert problems(result.request) == []


def test_decorate_over_budget_cuts_and_fades_with_a_note_ask() -> None:
    items = long_conversation()
    messages = stored(items)
    result = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL)
    assert result.new_episodes and len(result.new_traces) == len(result.new_episodes)
    assert result.transitions and all(t.after is EpisodeState.LEAVING for t in result.transitions)
    assert result.projected_view <= result.budget.landing
    assert result.note_ask_turns is not None
    assert result.request["messages"][-1]["content"].startswith("History from turn")
    assert result.request["tools"][-1]["function"]["name"] == "note"
    assert problems(result.request) == []


def test_decorate_no_new_fade_while_leaving_then_seals_after_note() -> None:
    items, messages, config, first = faded_once()
    assert first.transitions
    again = plan_call(
        request("chat_completions", items),
        StoredMemory(messages, episodes=first.episodes),
        now=messages[-1].at,
        config=config,
    )
    assert again.transitions == () and again.note_ask_turns == first.note_ask_turns

    leaving = [e for e in first.episodes if e.state is EpisodeState.LEAVING]
    noted = [acknowledge(e) if e.state is EpisodeState.LEAVING else e for e in first.episodes]
    fact = Fact(
        id="f1",
        note="Question 1 was answered.",
        subject="question 1",
        object="answer 1",
        milestone=False,
        episode_ids=tuple(e.id for e in leaving),
        at=messages[-1].at,
        first_turn=1,
        last_turn=2,
    )
    more = items + turn(12, closed=True)[1:] + turn(13, closed=False)
    later = stored(more)
    sealed = plan_call(
        request("chat_completions", more),
        StoredMemory(later, episodes=noted, facts=[fact]),
        now=later[-1].at,
        config=SMALL,
    )
    assert {t.episode_id for t in sealed.transitions if t.reason == "seal"} == {e.id for e in leaving}
    assert (
        sealed.request["messages"][1]["content"].splitlines()[1]
        == "- Question 1 was answered. [question 1, answer 1]"
    )
    shown = {m.seq for m in visible_messages(later, sealed.episodes)}
    assert all(seq not in shown for e in leaving for seq in range(e.first_seq, e.last_seq + 1))
    assert problems(sealed.request) == []


def test_decorate_ceiling_seals_leaving_without_facts() -> None:
    items = long_conversation()
    messages = stored(items)
    first = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL)
    grown = items + turn(12, text="y" * 4_000)[1:] + turn(13, closed=False)
    later = stored(grown)
    result = plan_call(
        request("chat_completions", grown), StoredMemory(later, episodes=first.episodes), now=later[-1].at, config=SMALL
    )
    forced = [t for t in result.transitions if t.reason == "ceiling"]
    assert forced and all(t.after is EpisodeState.SEALED for t in forced)
    marked = {e.id for e in result.episodes if e.sealed_without_facts}
    assert marked == {t.episode_id for t in forced}
    assert problems(result.request) == []


def test_decorate_sleeps_after_24_hours_even_when_not_full() -> None:
    items = [*turn(1, calls=[1]), *turn(2, calls=[1]), *turn(3, calls=[2]), *turn(4, closed=False)]
    messages = stored(items)
    late = messages[-1].at + timedelta(hours=24)
    messages[-1] = replace(messages[-1], at=late)
    roomy = MechanismConfig(episode_max_floor=20)
    probe = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-2].at, config=roomy)
    assert not probe.slept and probe.transitions == ()
    # The history fits its budget with room to spare: only the 24 hours make it fade.
    snug = replace(
        roomy, ceiling_tokens=probe.budget.fixed + 2 * probe.budget.room_for_next_call + probe.view_tokens + 50
    )
    result = plan_call(request("chat_completions", items), StoredMemory(messages), now=late, config=snug)
    assert result.slept
    assert result.view_tokens <= result.budget.budget
    assert result.transitions and all(t.reason == "sleep" for t in result.transitions)
    assert result.projected_view <= result.budget.landing


def test_decorate_no_sleep_within_a_tool_loop() -> None:
    items = [*turn(1), *turn(2, calls=[1], closed=False)]
    messages = stored(items, gap=timedelta(hours=30))
    result = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at)
    assert not result.slept


def test_decorate_size_ratio_lowers_the_ceiling_in_estimated_tokens() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    messages = stored(items)
    plain = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at)
    heavier = plan_call(request("chat_completions", items),
                        StoredMemory(messages), now=messages[-1].at, size_ratio=1.25)
    assert heavier.budget.ceiling == 160_000 and plain.budget.ceiling == 200_000


@settings(deadline=None)  # a shared, busy machine must not fail a pure property on timing
@given(st.lists(st.tuples(st.integers(1, 6), st.sampled_from(list(EpisodeState)), st.integers(0, 1)), max_size=8),
       st.integers(0, 40), st.integers(0, 12))
def test_in_view_and_recent_keeps_what_is_in_view_and_the_recent_tail(
    spans: list[tuple[int, EpisodeState, int]], length: int, recent: int
) -> None:
    messages = [StoredMessage(seq=seq, turn=seq, at=T0, body={"role": "user", "content": str(seq)}, tokens=1)
                for seq in range(1, length + 1)]
    episodes, first = [], 1
    for size, state, gap in spans:  # non-overlapping ranges, as episodes are, side by side or apart
        episodes.append(Episode(id=f"ep-{first}", state=state, first_seq=first, last_seq=first + size - 1,
                                first_turn=first, last_turn=first + size - 1, tokens=size, at=T0))
        first += size + gap
    kept = in_view_and_recent(messages, hidden_spans(episodes), recent=recent)
    tail = {m.seq for m in messages[-recent:]} if recent else set()
    assert kept == [m for m in messages
                    if m.seq in tail or not any(e.holds(m.seq) and not e.in_view for e in episodes)]


def test_a_cut_goes_only_as_far_as_the_lane_has_judged() -> None:
    items = long_conversation()
    messages = stored(items)
    last_closed = messages[-1].turn - 1
    judged = {m.seq: BoundaryScores(first=0.5, last=0.5) for m in messages if m.turn < last_closed}
    deferred = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL,
                        boundary_scores=judged)
    assert deferred.new_episodes and max(e.last_turn for e in deferred.new_episodes) == last_closed - 1
    assert deferred.projected_view <= deferred.budget.landing and problems(deferred.request) == []

    # Once the lane has scored that turn too, it is cut like the rest.
    judged |= {m.seq: BoundaryScores(first=0.5, last=0.5) for m in messages if m.turn == last_closed}
    scored = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL,
                      boundary_scores=judged)
    assert max(e.last_turn for e in scored.new_episodes) == last_closed


def test_a_lane_behind_is_waited_for_only_while_what_it_judged_can_take_the_view_under_the_budget() -> None:
    items = long_conversation()
    messages = stored(items)
    # The lane has scored nothing: waiting for it, the next call could pass the ceiling, and what left then would
    # leave unasked, its facts never written. Sizes cut now, and every episode picked is asked for.
    behind = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL,
                      boundary_scores={})
    assert behind.new_episodes and behind.estimated_tokens <= behind.budget.ceiling
    picked = [t for t in behind.transitions if t.before is EpisodeState.LIVE]
    assert picked and all(t.after is EpisodeState.LEAVING for t in picked), picked
    assert behind.note_ask_turns is not None and behind.projected_view <= behind.budget.landing
    # A lane far behind (or down) must not let the request pass the hard limit: sizes alone cut then.
    tight = replace(SMALL, ceiling_tokens=3_000)
    forced = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=tight,
                      boundary_scores={})
    assert forced.new_episodes and forced.estimated_tokens <= forced.budget.ceiling


def test_a_sleep_that_meets_a_fade_in_progress_is_owed_until_that_fade_ends() -> None:
    items, messages, config, first = faded_once()
    leaving = [e for e in first.episodes if e.state is EpisodeState.LEAVING]
    assert leaving
    # The next user message comes 25 hours later, while those episodes still wait for their note.
    more = items + turn(12, closed=True)[1:] + turn(13, closed=False)
    late = stored(more, gap=timedelta(hours=25))
    roomy = replace(SMALL, ceiling_tokens=20_000, landing_fraction=0.02)
    waiting = plan_call(request("chat_completions", more), StoredMemory(late, episodes=first.episodes), now=late[-1].at,
                       config=roomy)
    assert not waiting.slept and waiting.sleep_owed
    assert not any(t.reason == "sleep" for t in waiting.transitions)
    # The note comes; the fade ends at the next call, and the owed sleep happens there.
    noted = [acknowledge(e) if e.state is EpisodeState.LEAVING else e for e in waiting.episodes]
    after = more + [reply("answer 13")] + turn(14, closed=False)
    later = stored(after)
    slept = plan_call(request("chat_completions", after), StoredMemory(later, episodes=noted), now=later[-1].at,
                     config=roomy, sleep_owed=True)
    assert slept.slept and not slept.sleep_owed
    assert any(t.reason == "sleep" for t in slept.transitions)


def test_the_estimate_is_of_the_request_as_sent() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    messages = stored(items)
    result = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at)
    assert result.note_ask_turns is None
    # No note ask was sent, so none is counted: only the reserve in the budget holds it.
    sent = {k: v for k, v in result.request.items() if k != "messages"}
    sent["instructions_items"] = result.request["messages"][:1]
    assert result.estimated_tokens == estimate_tokens(json.dumps(sent)) + result.view_tokens
    assert result.estimated_tokens < result.budget.fixed + result.view_tokens


def test_a_user_message_larger_than_the_ceiling_is_refused_naming_the_limit() -> None:
    items = [*turn(1), user("z" * 20_000)]
    messages = stored(items)
    with pytest.raises(OverCeiling) as refused:
        plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=SMALL)
    assert refused.value.ceiling == SMALL.ceiling_tokens and refused.value.field == "messages"
    assert str(SMALL.ceiling_tokens) in refused.value.message and refused.value.tokens > SMALL.ceiling_tokens


def test_a_history_arriving_past_the_ceiling_seals_only_what_must_go_and_asks_for_the_rest() -> None:
    items = long_conversation()
    messages = stored(items)
    tight = replace(SMALL, ceiling_tokens=3_000)  # the whole history and instructions pass it
    result = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=tight)
    forced = [t.episode_id for t in result.transitions if t.reason == "ceiling"]
    leaving = [e for e in result.episodes if e.state is EpisodeState.LEAVING]
    assert forced and leaving and result.note_ask_turns is not None
    assert result.estimated_tokens <= tight.ceiling_tokens and problems(result.request) == []
    # Least active first: what was sealed without facts is older than what is still asked for.
    by_id = {e.id: e for e in result.episodes}
    assert max(by_id[key].last_seq for key in forced) < min(e.first_seq for e in leaving)


def _provider_count(plan: DecoratePlan, ratio: float) -> int:
    """The provider's count of what is sent, in a world where Lethe's estimate of messages and of the agent's own
    fields is 1/ratio of the provider's count (its JSON framing), while Lethe's own texts (the note ask and its
    tool) count as the provider counts them."""
    sent = plan.request
    ask = render_note_ask(*plan.note_ask_turns) if plan.note_ask_turns else None
    skeleton = {k: v for k, v in sent.items() if k not in ("messages", "tools")}
    total = estimate_tokens(json.dumps(skeleton)) * ratio
    for message in sent["messages"]:
        if ask is not None and message.get("content") == ask:
            total += estimate_tokens(ask)
        else:
            total += estimate_tokens(message) * (ratio if message["role"] == "system" else 1.0)
    total += sum(estimate_tokens(json.dumps(tool)) for tool in sent.get("tools") or [])
    return math.ceil(total)


@settings(deadline=None, max_examples=40)
@given(st.integers(2_200, 4_000), st.sampled_from([0.6, 0.75, 0.9]))
def test_a_request_carrying_the_note_ask_stays_within_the_ceiling_by_the_providers_count(
    ceiling: int, ratio: float
) -> None:
    items = long_conversation(turns=14)
    # The ratio learned on history: the provider counts `ratio` of our estimate of each message.
    messages = [replace(m, tokens=math.ceil(m.tokens / ratio)) for m in stored(items)]
    config = replace(SMALL, ceiling_tokens=ceiling)
    try:
        plan = plan_call(request("chat_completions", items), StoredMemory(messages), now=messages[-1].at, config=config,
                        size_ratio=ratio)
    except OverCeiling:
        return
    assert plan.note_ask_turns is not None  # the history arrives past the ceiling: a fade, and its ask
    assert _provider_count(plan, ratio) <= ceiling
