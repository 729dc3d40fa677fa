"""Recall's pure parts: the message split into its parts, rank fusion, the walk's rules and loop, grouping,
the recall block, and decorate placing the block (and leaving facts already in front of the model out)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.blocks.recall_block import CLOSE, OPEN, recall_block, render_recall_block
from engine.config import MechanismConfig
from engine.episodes import Episode, EpisodeState
from engine.facts import Fact
from engine.planning import StoredMemory
from engine.recall.fusion import fuse
from engine.recall.grouping import RecalledFact, RecalledPassage, admissible, group
from engine.recall.parts import split_parts
from engine.recall.walk import CENTRAL, RELEVANT, TANGENTIAL, UNRELATED, WalkRules, is_kept, kept_in_order, walk
from engine.sizing import estimate_tokens
from tests.unit.engine.conversations import T0, plan_call, request, stored, turn, user

WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=8)


# --- parts ---------------------------------------------------------------------------------------------

@given(st.lists(st.lists(WORD, min_size=1, max_size=30).map(" ".join), min_size=1, max_size=12),
       st.sampled_from([". ", "? ", "\n", "! "]))
def test_split_keeps_every_word_and_windows_long_parts(sentences: list[str], glue: str) -> None:
    text = glue.join(sentences)
    parts = split_parts(text, window=20)
    assert parts and all(p.strip() for p in parts)
    assert all(len(p.split()) <= 20 for p in parts)
    words_in_parts = {w.strip(".?!") for p in parts for w in p.split()}
    assert {w.strip(".?!") for w in text.split()} <= words_in_parts
    assert len(parts) == len(set(parts))


def test_a_sentence_said_again_is_one_part() -> None:
    banner = "The deploy bot reports the pipeline status for every stage across all regions."
    parts = split_parts(f"Where does LTH-5 stand, and who owns the follow-up? {banner} {banner} {banner}")
    assert parts.count(banner) == 1 and len(parts) == 2


def test_a_question_tacked_onto_a_long_correction_is_a_part_of_its_own() -> None:
    correction = "Actually the launch checklist changed: " + " ".join(f"item{i}" for i in range(70)) + "."
    parts = split_parts(f"{correction} Who owns the staging server?")
    assert parts[-1].endswith("Who owns the staging server?") and len(parts[-1].split()) < 60
    assert len(split_parts("OK. Thanks. And who owns the staging server now?")) == 1  # short ones joined


# --- fusion --------------------------------------------------------------------------------------------

@given(st.lists(st.lists(st.integers(0, 20), max_size=15), min_size=1, max_size=5))
def test_fusion_ranks_every_key_once_best_first(rankings: list[list[int]]) -> None:
    fused = fuse(rankings)
    keys = [k for k, _ in fused]
    assert sorted(keys) == sorted({k for r in rankings for k in r})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


def test_fusion_puts_what_several_searches_agree_on_first() -> None:
    # b is only second in both lists, a and c first in one each: agreement wins.
    assert [k for k, _ in fuse([["a", "b"], ["c", "b"]])][0] == "b"
    assert fuse([["x"]], limit=0) == []


# --- walk ----------------------------------------------------------------------------------------------

def _walk(seeds: Sequence[str], levels: dict[str, int], edges: dict[str, list[str]], rules: WalkRules,
          known: dict[str, int] | None = None, bridged: dict[str, int] | None = None) -> tuple[dict[str, int], list]:
    calls: list[tuple[list[str], list[str]]] = []

    async def rate(keys: Sequence[str], via: Sequence[str]) -> list[int]:
        calls.append((list(keys), list(via)))
        # A fact may look more relevant beside the bridge that led to it.
        return [(bridged or {}).get(k, levels[k]) if via else levels[k] for k in keys]

    async def near(keys: Sequence[str]) -> list[str]:
        return [n for k in keys for n in edges.get(k, [])]

    return asyncio.run(walk(seeds, rate=rate, neighbours=near, rules=rules, known=known)), calls


def test_a_bridge_leads_on_to_the_answer_one_step_away() -> None:
    levels = {"owner": CENTRAL, "leave": UNRELATED, "noise": UNRELATED, "far": RELEVANT}
    edges = {"owner": ["leave"], "leave": ["far"]}
    found, calls = _walk(["owner", "noise", "leave"], levels, edges, WalkRules(), bridged={"leave": RELEVANT})
    # Rated alone "leave" is unrelated; reached from "owner" it is rated again beside it, and kept.
    assert found["leave"] == RELEVANT and calls[1] == (["leave"], ["owner"])
    assert kept_in_order(found, WalkRules()) == ["owner", "leave", "far"]
    assert "noise" not in kept_in_order(found, WalkRules())


def test_the_walk_stops_at_its_steps_and_never_rates_a_known_fact() -> None:
    levels = {k: CENTRAL for k in "abcd"}
    edges = {"a": ["b"], "b": ["c"], "c": ["d"]}
    found, calls = _walk(["a"], levels, edges, WalkRules(steps=1))
    assert set(found) == {"a", "b"}
    found, calls = _walk(["a", "b"], levels, edges, WalkRules(), known={"a": CENTRAL})
    assert all("a" not in keys for keys, _ in calls)


def test_levels_that_lead_on_and_are_kept_follow_the_rules() -> None:
    rules = WalkRules(keep_level=TANGENTIAL, lead_on_level=CENTRAL)
    assert is_kept(TANGENTIAL, rules) and not is_kept(UNRELATED, rules)
    found, _ = _walk(["a"], {"a": RELEVANT, "b": CENTRAL}, {"a": ["b"]}, rules)
    assert found == {"a": RELEVANT}  # relevant is kept, but only central leads on
    with pytest.raises(ValueError):
        WalkRules(keep_level=4)


# --- grouping ------------------------------------------------------------------------------------------

ENTITIES = ["Dana", "checkout migration", "tax table", "legal", "refund line", "launch"]


@st.composite
def recalled(draw: st.DrawFn) -> list[RecalledFact | RecalledPassage]:
    n = draw(st.integers(0, 12))
    facts = []
    for i in range(n):
        subject, obj = draw(st.sampled_from(ENTITIES)), draw(st.sampled_from(ENTITIES))
        # A newer fact retires an older one: links point forward, as the graph makes them.
        retired_by = draw(st.one_of(st.none(), st.integers(i + 1, 12).map(lambda j: f"f{j}")))
        facts.append(RecalledFact(
            key=f"f{i}", id=i, note=f"Fact {i} about {subject} and {obj}.", subject=subject, object=obj,
            at=T0 + timedelta(hours=draw(st.integers(0, 48))), first_turn=i, last_turn=i + 1,
            retired_by=retired_by,
            part=draw(st.one_of(st.none(), st.sampled_from(["Who owns it?", "When is it?"])))))
    passages = [RecalledPassage(id=100 + i, text=f"user: passage {i}", first_turn=i, last_turn=i,
                                at=T0 + timedelta(hours=i)) for i in range(draw(st.integers(0, 3)))]
    items = facts + passages
    return draw(st.permutations(items))


@settings(max_examples=200)
@given(recalled(), st.sets(st.sampled_from([f"f{i}" for i in range(12)])))
def test_grouping_drops_nothing_and_shows_earlier_values_only_beside_their_replacement(
    items: list[RecalledFact | RecalledPassage], in_block: set[str]
) -> None:
    shown = admissible(items, in_facts_block=frozenset(in_block))
    grouped = group(shown)
    out = grouped.items()
    assert sorted(map(repr, out)) == sorted(map(repr, shown))  # nothing dropped, nothing added
    keys = {i.key for i in shown if isinstance(i, RecalledFact)}
    assert not keys & in_block
    for g in (*grouped.groups, *grouped.parts):
        seen: set[str] = set()
        for fact in g.facts:
            if fact.retired_by:
                # An earlier value only right after the chain of facts that replaced it, in the same group.
                assert fact.retired_by in keys and fact.retired_by in seen
            seen.add(fact.key)
    text = render_recall_block(grouped)
    assert (text is None) == (not out)
    if text:
        lines = text.splitlines()
        assert lines[0] == OPEN and lines[-1] == CLOSE


def test_groups_are_named_for_their_most_connected_entity_newest_first() -> None:
    def fact(i: int, subject: str, obj: str, hours: int) -> RecalledFact:
        return RecalledFact(f"f{i}", i, f"note {i}", subject, obj, T0 + timedelta(hours=hours), i, i)

    grouped = group([fact(1, "Dana", "checkout migration", 1), fact(2, "checkout migration", "tax table", 5),
                     fact(3, "legal", "refund line", 3)])
    assert [g.name for g in grouped.groups] == ["checkout migration", "legal"]
    assert [f.key for f in grouped.groups[0].facts] == ["f2", "f1"]


def test_the_block_keeps_to_its_budget_by_trimming_the_lowest_ranked() -> None:
    facts = [RecalledFact(f"f{i}", i, f"Fact number {i} " + "word " * 20, "A", f"B{i}", T0, i, i) for i in range(30)]
    count = len  # characters stand in for tokens
    text, kept = recall_block(facts, budget=1500, count_text=count)
    assert text is not None and count(text) <= 1500
    assert {f.key for f in kept} == {f"f{i}" for i in range(len(kept))}  # the best-ranked survive
    assert recall_block(facts, budget=10, count_text=count) == (None, [])


def _trim_one_by_one(items: Sequence[Any], fits: Any) -> list[Any]:
    from engine.recall.grouping import _with_replacements

    kept = list(items)
    while kept and not fits(kept):
        kept = _with_replacements(kept[:-1])
    return kept


@given(st.lists(st.tuples(st.integers(1, 60), st.integers(-1, 30)), max_size=25), st.integers(0, 600))
def test_trimming_by_halves_keeps_what_dropping_one_at_a_time_keeps(shape: list[tuple[int, int]],
                                                                    budget: int) -> None:
    """Retired facts among them (each names a later-listed or earlier one as its replacement), sizes varied."""
    from engine.recall.grouping import trim

    items = [RecalledFact(f"f{i}", i, "x" * size, "A", f"B{i}", T0, i, i,
                          retired_by=f"f{by}" if 0 <= by < len(shape) and by != i else None)
             for i, (size, by) in enumerate(shape)]

    def fits(kept: Sequence[Any]) -> bool:
        return sum(len(f.note) for f in kept) <= budget

    assert trim(items, fits) == _trim_one_by_one(items, fits)


# --- decorate ------------------------------------------------------------------------------------------

def _sealed_memory() -> tuple[list[dict], StoredMemory, Fact]:
    items = turn(1) + turn(2) + [user("Who owns checkout, and what is the tax table's state?")]
    messages = stored(items)
    episode = Episode(id="e1", first_seq=1, last_seq=2, first_turn=1, last_turn=1, tokens=messages[0].tokens,
                      at=T0, state=EpisodeState.SEALED, facts_written=True)
    fact = Fact(id="k1", note="Dana owns the checkout migration.", subject="Dana", object="checkout migration",
                milestone=False, episode_ids=("e1",), at=T0, first_turn=1, last_turn=1)
    return items, StoredMemory(messages, episodes=[episode], facts=[fact]), fact


def test_the_block_stands_before_the_new_message_without_what_the_facts_block_shows() -> None:
    items, memory, fact = _sealed_memory()
    in_block = RecalledFact("k1", 1, fact.note, "Dana", "checkout migration", T0, 1, 1)
    other = RecalledFact("k2", 2, "The tax table is blocked on legal.", "tax table", "legal", T0, 1, 1)
    plan = plan_call(request("chat_completions", items),
                     memory, now=T0 + timedelta(minutes=9), recall=[in_block, other])
    messages = plan.request["messages"]
    assert messages[-1]["role"] == "user" and messages[-2]["content"] == plan.recall_block
    assert "tax table is blocked" in plan.recall_block and fact.note not in plan.recall_block
    assert fact.note in messages[1]["content"]  # the facts block
    assert [i.key for i in plan.recall_items] == ["k2"]
    # Nothing recalled (or only what the facts block shows): no block at all, the request as without recall.
    bare = plan_call(request("chat_completions", items), memory, now=T0 + timedelta(minutes=9))
    for recall in ([], [in_block]):
        plan = plan_call(request("chat_completions", items), memory, now=T0 + timedelta(minutes=9), recall=recall)
        assert plan.recall_block is None and plan.request == bare.request


def test_earlier_blocks_stay_before_their_messages_and_count_in_the_view() -> None:
    items, memory, _ = _sealed_memory()
    seq = next(m.seq for m in memory.messages if m.turn == 2)
    text = f"{OPEN}\nolder records\n{CLOSE}"
    plan = plan_call(request("chat_completions", items), StoredMemory(memory.messages, memory.episodes, memory.facts,
                                                          recall_blocks={seq: text}), now=T0)
    bare = plan_call(request("chat_completions", items), memory, now=T0)
    contents = [m.get("content") for m in plan.request["messages"]]
    assert contents[contents.index(text) + 1] == items[2]["content"]  # turn 2's user message
    assert plan.view_tokens > bare.view_tokens
    assert MechanismConfig().walk_rules().keep_level == RELEVANT


def _near_the_ceiling() -> tuple[list[dict[str, Any]], StoredMemory, MechanismConfig, list[RecalledFact]]:
    """A sealed memory whose ceiling leaves 120 tokens, and far more records than fit them."""
    items, memory, _ = _sealed_memory()
    bare = plan_call(request("chat_completions", items), memory, now=T0)
    config = MechanismConfig(ceiling_tokens=bare.estimated_tokens + 120, recall_block_max_fraction=1.0,
                             recall_question_block_max_fraction=1.0, default_room_for_next_call=10,
                             default_typical_turn=10)
    many = [RecalledFact(f"k{i}", i, f"Record {i} about the tax table " + "detail " * 10, "tax table", f"x{i}",
                         T0, 1, 1) for i in range(2, 40)]
    return items, memory, config, many


def test_recall_never_makes_a_decorate_fail_its_block_shrinks_to_fit_the_ceiling() -> None:
    items, memory, config, many = _near_the_ceiling()
    plan = plan_call(request("chat_completions", items), memory, now=T0, config=config, recall=many)
    assert plan.estimated_tokens <= config.ceiling_tokens
    assert plan.recall_block is not None and 0 < len(plan.recall_items) < len(many)
    assert [i.key for i in plan.recall_items] == [f.key for f in many[:len(plan.recall_items)]]


def test_what_recall_brings_changes_the_block_and_nothing_the_memory_decides() -> None:
    """The block's budget is kept in what no fade can shrink while recall is finding it: the fade, the seals
    and the budget are the same whatever recall brings (so decorate plans before recall answers), and a block
    never seals an episode unasked: near the ceiling it shrinks instead."""
    items, memory, config, many = _near_the_ceiling()
    plans = [plan_call(request("chat_completions", items), memory, now=T0, config=config, recall=found)
             for found in ([], many[:1], many)]
    decided = [(p.episodes, p.transitions, p.budget, p.note_ask_turns, p.view_tokens) for p in plans]
    assert all(d == decided[0] for d in decided)
    assert plans[0].recall_block is None and plans[1].recall_block is not None and plans[2].recall_block is not None
    assert plans[0].estimated_tokens < plans[1].estimated_tokens <= plans[2].estimated_tokens <= config.ceiling_tokens


@settings(max_examples=40, deadline=None)
@given(questions=st.integers(min_value=1, max_value=150), block_words=st.integers(min_value=5, max_value=200),
       ceiling=st.sampled_from([4_000, 8_000, 32_000]))
def test_earlier_blocks_never_hold_more_than_their_share_of_the_request_the_newest_kept(
        questions: int, block_words: int, ceiling: int) -> None:
    # A conversation of questions, each turn with the block recall placed for it; then one more question.
    items = [item for i in range(questions) for item in turn(i + 1)] + [user("And the tax table?")]
    messages = stored(items)
    config = MechanismConfig(ceiling_tokens=ceiling)
    blocks = {m.seq: f"{OPEN}\nrecords of question {m.turn}: " + "detail " * block_words + f"\n{CLOSE}"
              for m in messages if m.kind == "user" and m.turn <= questions}
    shown = {seq: frozenset({m_turn}) for m_turn, seq in enumerate(sorted(blocks), start=1)}
    memory = StoredMemory(messages, recall_blocks=blocks, recall_shown=shown)
    ask = RecalledFact("k1", 1, "The tax table is blocked on legal.", "tax table", "legal", T0, 1, 1)
    plan = plan_call(request("chat_completions", items), memory, now=messages[-1].at, config=config, recall=[ask])
    sent = [m.get("content") for m in plan.request["messages"]]
    earlier = [seq for seq, text in blocks.items() if text in sent]
    held = sum(estimate_tokens(blocks[seq]) for seq in earlier)
    assert held <= plan.budget.landing * config.recall_blocks_max_share
    # ...and so of the request as sent, once the view holds at least the landing.
    if plan.view_tokens >= plan.budget.landing:
        assert held <= plan.estimated_tokens * config.recall_blocks_max_share
    # The newest go in first: what is left out is older than all that is kept.
    assert all(left < min(earlier) for left in set(blocks) - set(earlier)) if earlier else True
    # Fact 1 was shown by the first block: not recalled again while that block is sent, recalled once it is left
    # out (when the ceiling leaves the new block any room).
    if min(blocks) in earlier:
        assert "tax table is blocked" not in (plan.recall_block or "")
    elif plan.recall_block is not None:
        assert "tax table is blocked" in plan.recall_block
