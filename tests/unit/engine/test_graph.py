"""The graph's rules: alias keys, canonical names, and what a new fact does to the facts it was judged with."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from engine.graph import Claim, Judged, Relation, fold, more_specific, plan_fact
from engine.messages import StoredMessage
from engine.passages import cut_passages


def test_fold_ignores_case_spacing_and_edges() -> None:
    assert fold("  Dana   Whitfield. ") == fold("dana whitfield") == "dana whitfield"


def test_most_specific_name_is_canonical_when_none_is_used_yet() -> None:
    assert more_specific("Dana", "Dana Whitfield") == "Dana Whitfield"
    assert more_specific("Dana Whitfield", "our PM Dana") == "Dana Whitfield"
    assert more_specific("staging box", "staging server db-stage-02") == "staging server db-stage-02"


def _j(key: str, relation: Relation, *, source: str = "unknown", conflict: str | None = None) -> Judged:
    return Judged(Claim(key, source, conflict), relation, 0.9)


def test_restatement_merges_into_the_fact_held_and_retires_nothing() -> None:
    action = plan_fact(Claim("new"), [_j("a", Relation.RESTATES), _j("b", Relation.UNRELATED)])
    assert action.merge_into == "a" and action.retire == () and action.conflicts == ()


def test_contradiction_and_milestone_update_retire_the_older_by_the_newer() -> None:
    action = plan_fact(Claim("new", "user"), [_j("a", Relation.CONTRADICTS), _j("b", Relation.UPDATES)])
    assert action.merge_into is None and action.retire == (("a", "new"), ("b", "new"))


def test_detail_only_retires_nothing() -> None:
    assert plan_fact(Claim("new"), [_j("a", Relation.UNRELATED)]).retire == ()


def test_assistant_inference_does_not_overrule_what_the_user_said() -> None:
    action = plan_fact(Claim("new", "assistant"), [_j("a", Relation.CONTRADICTS, source="user")])
    assert action.retire == () and action.conflicts == ("a",)


def test_a_user_correction_always_wins_and_settles_the_conflict() -> None:
    # "a" (user) and "b" (assistant) are in conflict; the user now says "b" again and contradicts "a".
    action = plan_fact(Claim("new", "user"), [_j("a", Relation.CONTRADICTS, source="user", conflict="b"),
                                              _j("b", Relation.RESTATES, source="assistant", conflict="a")])
    assert action.merge_into == "b" and ("a", "b") in action.retire
    assert action.source_upgrade and "b" in action.settled


def test_a_user_correction_of_a_user_fact_retires_it() -> None:
    action = plan_fact(Claim("new", "user"), [_j("a", Relation.CONTRADICTS, source="user")])
    assert action.retire == (("a", "new"),) and action.conflicts == ()


_AT = datetime(2026, 1, 1, tzinfo=UTC)


@given(st.lists(st.text(min_size=0, max_size=3000), min_size=1, max_size=8))
def test_passages_cover_every_message_in_order_and_stay_within_size(texts: list[str]) -> None:
    messages = [StoredMessage(seq=i + 1, turn=i // 2 + 1, at=_AT, body={"role": "user", "content": t}, tokens=1)
                for i, t in enumerate(texts)]
    passages = cut_passages(messages, size=500, overlap=100)
    assert all(len(p.text) <= 500 for p in passages)
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    assert sorted({s for p in passages for s in range(p.first_seq, p.last_seq + 1)}) == [m.seq for m in messages]
    for message in messages:
        # Every word of a message is in some passage of it (long ones windowed with overlap).
        own = " ".join(p.text for p in passages if p.first_seq <= message.seq <= p.last_seq)
        assert all(word in own for word in str(message.body["content"]).split())


def test_facts_block_shows_both_sides_of_an_open_conflict_dated_and_attributed() -> None:
    from engine.blocks.facts_block import render_facts_block
    from engine.facts import Fact

    said = Fact(id="a", note="The launch is on Wednesday.", subject="launch", object="Wednesday", milestone=False,
                episode_ids=("e1",), at=_AT, first_turn=3, last_turn=4, source="user", conflict_with="b")
    guessed = Fact(id="b", note="The launch is on Friday.", subject="launch", object="Friday", milestone=False,
                   episode_ids=("e2",), at=_AT, first_turn=9, last_turn=9, source="assistant", conflict_with="a")
    block = render_facts_block([said, guessed], {})
    assert block is not None
    lines = [line for line in block.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 and all("unsettled" in line for line in lines)
    assert "the user said so" in block and "the assistant inferred it" in block and "turns 3–4" in block
