"""Claim kinds: ordering in the facts block, the constraints' reserved room, open and settled questions, and
revision against correction."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from contracts.errors import OverCeiling
from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import read_note_arguments, render_note_ask
from engine.claims import in_front, retirement, settled_question
from engine.config import MechanismConfig
from engine.episodes import EpisodeState
from engine.facts import KINDS, Fact
from engine.graph import Claim, Judged, Relation, plan_fact
from engine.planning import StoredMemory
from tests.unit.engine.conversations import T0, episode, plan_call, request, stored, turn

STATES = [EpisodeState.LIVE, EpisodeState.LEAVING, EpisodeState.SEALED, EpisodeState.FORGOTTEN]


def fact(number: int, kind: str = "fact", *, episodes: tuple[str, ...] = ("e0",), minutes: int = 0,
         **fields: object) -> Fact:
    base = Fact(id=f"f{number}", note=f"Fact number {number} holds.", subject=f"s{number}", object=f"o{number}",
                milestone=False, episode_ids=episodes, at=T0 + timedelta(minutes=minutes), first_turn=1,
                last_turn=1, kind=kind)
    return replace(base, **fields)  # type: ignore[arg-type]


def shown_notes(block: str | None) -> list[str]:
    lines = [line.removeprefix("- ") for line in (block or "").splitlines() if line.startswith("- ")]
    return [(line.split(") ", 1)[1] if line.startswith("(") else line).split(" [")[0] for line in lines]


def facts_block_of(result: object) -> str | None:
    messages = result.request["messages"]  # type: ignore[attr-defined]
    blocks = [m["content"] for m in messages if m["role"] == "system" and m["content"].startswith("Facts kept")]
    return blocks[0] if blocks else None


# --- ordering ---------------------------------------------------------------------------------------------------

def test_constraints_and_corrections_go_first_among_equal_activations() -> None:
    facts = [fact(1, "decision", minutes=30), fact(2, "constraint", minutes=1), fact(3, minutes=20),
             fact(4, "correction", minutes=2), fact(5, "dead_end", minutes=10)]
    block = render_facts_block(facts, {}, weigh_kinds=True)
    assert shown_notes(block)[:2] == ["Fact number 4 holds.", "Fact number 2 holds."]
    assert "(constraint, still binding) Fact number 2" in (block or "")
    # Off: newest first, whatever the kind.
    assert shown_notes(render_facts_block(facts, {}))[:2] == ["Fact number 1 holds.", "Fact number 3 holds."]


def test_activation_still_comes_before_kind() -> None:
    facts = [fact(1, "constraint"), fact(2)]
    assert shown_notes(render_facts_block(facts, {"f2": 0.5}, weigh_kinds=True)) == [
        "Fact number 2 holds.", "Fact number 1 holds."]


# --- the constraints' room --------------------------------------------------------------------------------------

def test_a_constraint_is_in_front_once_out_of_view_even_when_forgotten() -> None:
    constraint = fact(1, "constraint", episodes=("e1",))
    assert not in_front(constraint, sealed=set(), in_view={"e1"}, weigh_kinds=True)  # its messages are in view
    assert in_front(constraint, sealed=set(), in_view=set(), weigh_kinds=True)  # forgotten (or never in one)
    assert not in_front(constraint, sealed=set(), in_view=set(), weigh_kinds=False)
    assert not in_front(fact(2, episodes=("e1",)), sealed=set(), in_view=set(), weigh_kinds=True)


def test_a_correction_stays_in_front_while_the_claim_it_corrected_is_in_view() -> None:
    correction = fact(1, "correction", episodes=("e2",), corrects_episodes=("e1",))
    assert in_front(correction, sealed=set(), in_view={"e1"}, weigh_kinds=True)  # e2 forgotten, e1 in view
    assert not in_front(correction, sealed=set(), in_view=set(), weigh_kinds=True)  # the claim is gone too
    assert not in_front(correction, sealed=set(), in_view={"e1"}, weigh_kinds=False)
    assert not in_front(correction, sealed=set(), in_view={"e1", "e2"}, weigh_kinds=True)  # itself in view


def _memory(states: list[EpisodeState], facts: list[Fact]) -> tuple[dict, StoredMemory]:
    items = [item for index in range(1, len(states) + 2) for item in turn(index, closed=index <= len(states),
                                                                         text="y" * 120)]
    messages = stored(items)
    episodes = [episode(state, id=f"e{i}", first_seq=2 * i + 1, last_seq=2 * i + 2, first_turn=i + 1,
                        last_turn=i + 1, tokens=messages[2 * i].tokens + messages[2 * i + 1].tokens,
                        at=messages[2 * i + 1].at, facts_written=state is not EpisodeState.LIVE)
                for i, state in enumerate(states)]
    return request("chat_completions", items), StoredMemory(messages, episodes=episodes, facts=facts)


def test_a_fade_forgets_the_episode_but_not_its_constraint() -> None:
    states = [EpisodeState.SEALED] * 6
    facts = [fact(i, "constraint" if i == 0 else "fact", episodes=(f"e{i}",)) for i in range(6)]
    body, memory = _memory(states, facts)
    now = memory.messages[-1].at + timedelta(hours=30)  # a sleep: the view fades to the landing
    probe = plan_call(body, memory, now=memory.messages[-1].at)
    # A budget a little over the view: the landing (half of it) is under it, so the sleep forgets.
    roomy = MechanismConfig(ceiling_tokens=probe.budget.fixed + 200 + probe.view_tokens * 5 // 4,
                            default_room_for_next_call=200, default_typical_turn=100)
    result = plan_call(body, memory, now=now, config=roomy)
    forgotten = {e.id for e in result.episodes if e.state is EpisodeState.FORGOTTEN}
    assert "e0" in forgotten and result.slept
    assert "Fact number 0 holds." in shown_notes(facts_block_of(result))
    assert not {f"Fact number {e[1:]} holds." for e in forgotten - {"e0"}} & set(shown_notes(facts_block_of(result)))
    off = plan_call(body, memory, now=now, config=replace(roomy, claim_kinds=False))
    assert "e0" in {e.id for e in off.episodes if e.state is EpisodeState.FORGOTTEN}
    assert "Fact number 0 holds." not in shown_notes(facts_block_of(off))


def test_the_constraints_room_is_set_aside_with_what_no_fade_can_shrink() -> None:
    facts = [fact(i, "constraint", episodes=("gone",)) for i in range(5)]
    body, memory = _memory([EpisodeState.SEALED] * 3, facts)
    on = plan_call(body, memory, now=memory.messages[-1].at)
    off = plan_call(body, memory, now=memory.messages[-1].at, config=MechanismConfig(claim_kinds=False))
    assert on.budget.fixed > off.budget.fixed
    assert on.budget.budget < off.budget.budget


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(STATES), min_size=1, max_size=6),
    st.lists(st.tuples(st.sampled_from(KINDS), st.sets(st.integers(0, 7), min_size=1, max_size=2)), max_size=10),
    st.integers(1_500, 12_000),
    st.booleans(),
)
def test_a_constraint_in_force_out_of_view_is_in_the_facts_block_for_any_ceiling_that_fits(
    states: list[EpisodeState], drawn: list[tuple[str, set[int]]], ceiling: int, asleep: bool
) -> None:
    facts = [fact(number, kind, episodes=tuple(f"e{i}" for i in sorted(owners)))  # e6, e7: long forgotten
             for number, (kind, owners) in enumerate(drawn)]
    body, memory = _memory(states, facts)
    now = memory.messages[-1].at + (timedelta(hours=30) if asleep else timedelta())
    config = MechanismConfig(ceiling_tokens=ceiling, default_room_for_next_call=200, default_typical_turn=100,
                             episode_max_floor=100)
    try:
        result = plan_call(body, memory, now=now, config=config)
    except OverCeiling:
        assume(False)  # the ceiling does not fit the note ask, the constraints and the turn in progress
        return
    in_view = {e.id for e in result.episodes if e.state in (EpisodeState.LIVE, EpisodeState.LEAVING)}
    expected = {f.note for f in facts if f.kind == "constraint" and not in_view & set(f.episode_ids)}
    assert expected <= set(shown_notes(facts_block_of(result)))
    assert result.estimated_tokens <= ceiling


# --- open and settled questions ---------------------------------------------------------------------------------

def test_open_questions_are_listed_as_open_until_settled() -> None:
    question = fact(1, "open_question", note="Which region hosts the EU tenant database?")
    block = render_facts_block([question, fact(2)], {}, weigh_kinds=True) or ""
    assert "Open questions" in block and block.index("Open questions") < block.index("EU tenant")
    settled = render_facts_block([replace(question, settled_by="f3"), fact(2)], {}, weigh_kinds=True) or ""
    assert "Open questions" not in settled and "(question, since settled)" in settled


def test_settles_names_the_open_question_it_answers() -> None:
    questions = [fact(1, "open_question", note="Which region hosts the EU tenant database?"),
                 fact(2, "open_question", note="Who owns the billing migration?")]
    assert settled_question("which region hosts the EU tenant database", questions) == "f1"
    assert settled_question("billing migration owner", questions) == "f2"
    assert settled_question("the colour of the logo", questions) is None
    assert settled_question("Who owns the billing migration?", [replace(questions[1], settled_by="f9")]) is None


def test_the_judge_settles_an_open_question_instead_of_retiring_it() -> None:
    question = Claim("q", "user", kind="open_question")
    action = plan_fact(Claim("a", "user"), [Judged(question, Relation.UPDATES, 0.8)])
    assert action.answers == ("q",) and action.retire == ()
    # A question does not answer a question.
    again = plan_fact(Claim("q2", "user", kind="open_question"), [Judged(question, Relation.UPDATES, 0.8)])
    assert again.answers == ()


def test_note_entries_take_a_kind_and_what_they_settle() -> None:
    reading = read_note_arguments({"notes": [
        {"note": "Deploys must not run on Fridays.", "subject": "deploys", "object": "Fridays",
         "milestone": False, "kind": "constraint"},
        {"note": "The EU database is in Frankfurt.", "subject": "EU database", "object": "Frankfurt",
         "milestone": False, "settles": "Which region hosts the EU database?"},
    ]})
    assert reading.taken and reading.entries[0].kind == "constraint" and reading.entries[1].kind == "fact"
    assert reading.entries[1].settles == "Which region hosts the EU database?"
    bad = read_note_arguments({"notes": [{"note": "x", "subject": "a", "object": "b", "milestone": False,
                                          "kind": "rumour"}]})
    assert not bad.taken and "kind" in (bad.error or "")
    ask = render_note_ask(3, 4)
    for kind in KINDS:
        assert f"- {kind}:" in ask  # each kind explained in a line


# --- revision against correction --------------------------------------------------------------------------------

@pytest.mark.parametrize(("old", "new", "kind", "expected"), [
    ("assistant", "assistant", "fact", "revision"),
    ("user", "user", "fact", "revision"),
    ("assistant", "user", "fact", "correction"),
    ("tool", "user", "fact", "correction"),
    ("assistant", "assistant", "correction", "correction"),
    ("unknown", "unknown", "fact", "update"),
])
def test_retirement_is_a_revision_for_one_voice_and_a_correction_across_voices(
    old: str, new: str, kind: str, expected: str
) -> None:
    assert retirement(old_source=old, new_source=new, new_kind=kind) == expected


def test_the_graph_marks_revisions_and_corrections() -> None:
    own = plan_fact(Claim("new", "assistant"), [Judged(Claim("old", "assistant"), Relation.CONTRADICTS, 0.9)])
    assert own.retire == (("old", "new"),) and own.retired_as == (("old", "revision"),)
    assert own.revises == "old" and not own.correction
    fixed = plan_fact(Claim("new", "user"), [Judged(Claim("old", "assistant"), Relation.CONTRADICTS, 0.9)])
    assert fixed.retired_as == (("old", "correction"),) and fixed.correction and fixed.revises is None
    # The assistant does not overrule the user: the conflict stays open, as before kinds.
    held = plan_fact(Claim("new", "assistant"), [Judged(Claim("old", "user"), Relation.CONTRADICTS, 0.9)])
    assert held.retire == () and held.conflicts == ("old",)




def test_a_recalled_revision_is_shown_with_both_dates_and_a_correction_as_one() -> None:
    from engine.blocks.recall_block import recall_block
    from engine.recall.grouping import RecalledFact
    from engine.sizing import estimate_tokens

    later = T0 + timedelta(days=3)
    now = RecalledFact("k2", 2, "The design demo moved to Thursday.", "design demo", "Thursday", later, 9, 9)
    then = RecalledFact("k1", 1, "The design demo is on Wednesday.", "design demo", "Wednesday", T0, 2, 2,
                        retired_by="k2", retired_as="revision")
    text, _ = recall_block([now, then], budget=2_000, count_text=estimate_tokens)
    assert text is not None and "since revised" in text
    assert f"{T0:%Y-%m-%d}" in text and f"{later:%Y-%m-%d}" in text
    text, _ = recall_block([now, replace(then, retired_as="correction")], budget=2_000, count_text=estimate_tokens)
    assert text is not None and "since corrected" in text
