"""The recall bench's generated conversation: the same for a seed, and every question fair by construction."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Appended, not prepended: bench/providers.py would hide the providers package.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from recall_conversation import Conversation, generate  # noqa: E402

from providers.tokens import TiktokenCounter  # noqa: E402

CEILING = 6000
COUNT = TiktokenCounter().count_text


@pytest.fixture(scope="module")
def conversation() -> Conversation:
    return generate(seed=7, turns=320, ceiling_tokens=CEILING, count_tokens=COUNT)


def test_the_same_seed_gives_the_same_conversation(conversation: Conversation) -> None:
    again = generate(seed=7, turns=320, ceiling_tokens=CEILING, count_tokens=COUNT)
    other = generate(seed=8, turns=320, ceiling_tokens=CEILING, count_tokens=COUNT)
    assert again == conversation
    assert [t.user for t in other.turns] != [t.user for t in conversation.turns]


def test_it_spans_weeks_of_turns_with_every_kind_of_question(conversation: Conversation) -> None:
    assert len(conversation.turns) == 320
    assert (conversation.turns[-1].at - conversation.turns[0].at).days >= 14
    assert all(a.at < b.at for a, b in zip(conversation.turns, conversation.turns[1:], strict=False))
    kinds = [q.kind for q in conversation.questions]
    assert {k: kinds.count(k) for k in ("direct", "paraphrased", "two_hop")} == {
        "direct": 10, "paraphrased": 10, "two_hop": 9}
    assert any(q.olds for q in conversation.questions)
    assert any(t.tool for t in conversation.turns)
    # Lethe takes the same user message sent again as a resend, which would shift every turn number after it.
    users = [t.user for t in conversation.turns]
    assert len(set(users)) == len(users)


def test_every_answer_was_planted_before_its_question_and_left_the_view(conversation: Conversation) -> None:
    sizes = [sum(COUNT(x) + 4 for x in (t.user, t.reply, t.tool or "") if x) for t in conversation.turns]
    for question in conversation.questions:
        assert conversation.turn(question.turn).user == question.text
        involved = [conversation.facts[f] for f in (*question.answers, *question.olds)]
        for fact in involved:
            assert fact.turn < question.turn
            assert fact.note in conversation.turn(fact.turn).user
            assert fact.id in conversation.turn(fact.turn).facts
        newest = max(f.turn for f in involved)
        # The messages between the last of its facts and the question alone overflow the ceiling.
        assert sum(sizes[newest:question.turn - 1]) >= CEILING
        # The question never carries its own answer.
        for fact in (conversation.facts[f] for f in question.answers):
            assert not all(k.lower() in question.text.lower() for k in fact.keys)


def test_a_changed_fact_is_asked_for_its_new_value(conversation: Conversation) -> None:
    changed = [q for q in conversation.questions if q.olds]
    for question in changed:
        for old in question.olds:
            newer = [conversation.facts[f] for f in question.answers if conversation.facts[f].replaces == old]
            assert len(newer) == 1
            assert newer[0].turn > conversation.facts[old].turn
            assert newer[0].keys[0] == conversation.facts[old].keys[0]  # same thing...
            assert newer[0].keys[1] != conversation.facts[old].keys[1]  # ...another value


def test_two_hop_questions_go_through_a_bridge_entity(conversation: Conversation) -> None:
    for question in (q for q in conversation.questions if q.kind == "two_hop"):
        bridge, target = (conversation.facts[f] for f in question.answers)
        assert bridge.object == target.subject  # the bridge: the person's project, team or service
        assert bridge.subject in question.text and bridge.object not in question.text
