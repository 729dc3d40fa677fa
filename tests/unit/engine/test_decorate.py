from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from engine.config import MechanismConfig
from engine.cutting import BoundaryScores
from engine.decorate import MemoryView, decorate, in_view_and_recent, visible_messages
from engine.episodes import Episode, EpisodeState, acknowledge
from engine.facts import Fact
from engine.messages import StoredMessage
from engine.validity import problems
from tests.unit.engine.conversations import T0, request, stored, turn

SMALL = MechanismConfig(
    ceiling_tokens=3_000, default_room_for_next_call=200, default_typical_turn=100, episode_max_floor=100
)


def long_conversation(turns: int = 12, shape: str = "chat") -> list[dict]:
    items: list[dict] = []
    for index in range(1, turns):
        items += turn(index, shape, calls=[1], text="x" * 200)  # type: ignore[arg-type]
    return items + turn(turns, shape, closed=False)  # type: ignore[arg-type]


def test_decorate_small_history_changes_nothing() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    result = decorate(request("chat", items), MemoryView(stored(items)), now=T0 + timedelta(minutes=5))
    assert result.transitions == () and result.note_ask_turns is None
    assert result.request["messages"][1:] == items
    assert problems(result.request) == []


def test_decorate_over_budget_cuts_and_fades_with_a_note_ask() -> None:
    items = long_conversation()
    messages = stored(items)
    result = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL)
    assert result.new_episodes and len(result.new_traces) == len(result.new_episodes)
    assert result.transitions and all(t.after is EpisodeState.LEAVING for t in result.transitions)
    assert result.projected_view <= result.budget.landing
    assert result.note_ask_turns is not None
    assert result.request["messages"][-1]["content"].startswith("History from turn")
    assert result.request["tools"][-1]["function"]["name"] == "note"
    assert problems(result.request) == []


def test_decorate_no_new_fade_while_leaving_then_seals_after_note() -> None:
    items = long_conversation()
    messages = stored(items)
    probe = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL)
    # A ceiling just above this request: over the budget (so it fades) but not past the ceiling.
    config = replace(SMALL, ceiling_tokens=probe.budget.fixed + probe.view_tokens + 1)
    first = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=config)
    assert first.transitions
    again = decorate(
        request("chat", items),
        MemoryView(messages, episodes=first.episodes),
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
    sealed = decorate(
        request("chat", more),
        MemoryView(later, episodes=noted, facts=[fact]),
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
    first = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL)
    grown = items + turn(12, text="y" * 4_000)[1:] + turn(13, closed=False)
    later = stored(grown)
    result = decorate(
        request("chat", grown), MemoryView(later, episodes=first.episodes), now=later[-1].at, config=SMALL
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
    probe = decorate(request("chat", items), MemoryView(messages), now=messages[-2].at, config=roomy)
    assert not probe.slept and probe.transitions == ()
    # The history fits its budget with room to spare: only the 24 hours make it fade.
    snug = replace(
        roomy, ceiling_tokens=probe.budget.fixed + 2 * probe.budget.room_for_next_call + probe.view_tokens + 50
    )
    result = decorate(request("chat", items), MemoryView(messages), now=late, config=snug)
    assert result.slept
    assert result.view_tokens <= result.budget.budget
    assert result.transitions and all(t.reason == "sleep" for t in result.transitions)
    assert result.projected_view <= result.budget.landing


def test_decorate_no_sleep_within_a_tool_loop() -> None:
    items = [*turn(1), *turn(2, calls=[1], closed=False)]
    messages = stored(items, gap=timedelta(hours=30))
    result = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at)
    assert not result.slept


def test_decorate_places_recall_block_before_its_user_message() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    messages = stored(items)
    result = decorate(
        request("responses", items), MemoryView(messages, recall_blocks={2: "RECALLED"}), now=messages[-1].at
    )
    contents = [m.get("content") for m in result.request["input"]]
    assert contents.index("RECALLED") == len(contents) - 2
    assert result.request["input"][-2]["role"] == "developer"


def test_decorate_size_ratio_lowers_the_ceiling_in_estimated_tokens() -> None:
    items = [*turn(1), *turn(2, closed=False)]
    messages = stored(items)
    plain = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at)
    heavier = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, size_ratio=1.25)
    assert heavier.budget.ceiling == 160_000 and plain.budget.ceiling == 200_000


@given(st.lists(st.tuples(st.integers(1, 6), st.sampled_from(list(EpisodeState))), max_size=8),
       st.integers(0, 40), st.integers(0, 12))
def test_in_view_and_recent_keeps_what_is_in_view_and_the_recent_tail(
    spans: list[tuple[int, EpisodeState]], length: int, recent: int
) -> None:
    messages = [StoredMessage(seq=seq, turn=seq, at=T0, body={"role": "user", "content": str(seq)}, tokens=1)
                for seq in range(1, length + 1)]
    episodes, first = [], 1
    for size, state in spans:  # non-overlapping ranges, as episodes are
        episodes.append(Episode(id=f"ep-{first}", state=state, first_seq=first, last_seq=first + size - 1,
                                first_turn=first, last_turn=first + size - 1, tokens=size, at=T0))
        first += size + 1
    kept = in_view_and_recent(messages, episodes, recent=recent)
    tail = {m.seq for m in messages[-recent:]} if recent else set()
    assert kept == [m for m in messages
                    if m.seq in tail or not any(e.holds(m.seq) and not e.in_view for e in episodes)]


def test_a_cut_can_leave_the_turn_that_just_closed_for_the_lane_to_score() -> None:
    items = long_conversation()
    messages = stored(items)
    last_closed = messages[-1].turn - 1
    cut_all = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL)
    assert max(e.last_turn for e in cut_all.new_episodes) == last_closed

    deferred = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL,
                        defer_unscored_turn=True)
    assert deferred.new_episodes and max(e.last_turn for e in deferred.new_episodes) == last_closed - 1
    assert deferred.projected_view <= deferred.budget.landing and problems(deferred.request) == []

    # Once the lane has scored that turn, it is cut like the rest.
    scores = {m.seq: BoundaryScores(first=0.5, last=0.5) for m in messages if m.turn == last_closed}
    scored = decorate(request("chat", items), MemoryView(messages), now=messages[-1].at, config=SMALL,
                      defer_unscored_turn=True, boundary_scores=scores)
    assert max(e.last_turn for e in scored.new_episodes) == last_closed
