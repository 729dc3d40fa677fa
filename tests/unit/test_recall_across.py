"""Recall across a user's conversations, the pure parts: which of the user's graph's finds a conversation keeps
(never its own), how they are marked and merged after its own, how the block dates them, and when the idle gate
is due."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from contracts.lane_types import MemoryStatus
from engine.blocks.dates import ELSEWHERE, stamp
from engine.blocks.recall_block import render_recall_block
from engine.recall.grouping import Recalled, RecalledFact, RecalledPassage, group
from recall.across import from_elsewhere
from recall.find import Found, merged
from store.repositories.recall_blocks import items_from_json, items_to_json
from workflows.timers import idle_due

AT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def _fact(i: int, note: str = "The user's dog is called Pretzel.") -> RecalledFact:
    return RecalledFact(key=f"k{i}", id=i, note=note, subject="user", object="Pretzel", at=AT, first_turn=1,
                        last_turn=2)


def _passage(i: int) -> RecalledPassage:
    return RecalledPassage(id=i, text="user: my dog is Pretzel", first_turn=3, last_turn=4, at=AT)


@given(st.lists(st.tuples(st.booleans(), st.sampled_from([None, 1, 2])), max_size=12))
def test_the_users_graph_gives_only_other_conversations_items_all_marked(
    drawn: list[tuple[bool, int | None]]
) -> None:
    items: list[Recalled] = [replace(_fact(i) if is_fact else _passage(i), origin_pk=origin)
                             for i, (is_fact, origin) in enumerate(drawn)]
    kept = from_elsewhere(items, own_pk=1)
    assert all(item.elsewhere and item.origin_pk is None for item in kept)
    assert [(type(i), i.id) for i in kept] == [
        (type(i), i.id) for i, (_, origin) in zip(items, drawn, strict=True) if origin != 1]


def test_a_new_memory_keeps_everything_of_the_users_graph() -> None:
    kept = from_elsewhere([replace(_fact(1), origin_pk=5), replace(_passage(2), origin_pk=5)], own_pk=None)
    assert [i.id for i in kept] == [1, 2]


def test_the_conversations_own_finds_come_first() -> None:
    own = Found("q", [_fact(1)], "inline")
    crossed = Found("q", [_fact(2)], "inline")
    both = merged(own, crossed)
    assert both is not None and [i.id for i in both.items] == [1, 2] and both.provenance == "inline"
    assert merged(None, crossed) is crossed
    assert merged(Found("q", [], "inline"), crossed) is crossed
    assert merged(own, None) is own
    assert merged(None, None) is None


def test_a_record_of_another_conversation_is_dated_without_this_ones_turns() -> None:
    assert stamp(AT, 1, 2) == "[2026-03-02 09:30 UTC, turns 1–2]"
    assert stamp(AT, 1, 2, elsewhere=True) == f"[2026-03-02 09:30 UTC, {ELSEWHERE}]"


def test_the_block_marks_records_of_other_conversations_and_says_so_once() -> None:
    mine = render_recall_block(group([_fact(1, "The launch is on Friday.")]))
    assert mine is not None and ELSEWHERE not in mine
    theirs = render_recall_block(group([replace(_fact(2), elsewhere=True), replace(_passage(3), elsewhere=True)]))
    assert theirs is not None
    assert f"{ELSEWHERE}, 2026-03-02 09:30 UTC]" in theirs
    assert f"[2026-03-02 09:30 UTC, {ELSEWHERE}] The user's dog is called Pretzel." in theirs
    assert "the user's other conversations" in theirs and "the user's other conversations" not in mine


def test_the_idle_gate_is_due_once_per_user_message() -> None:
    last = AT
    status = MemoryStatus(last_user_message_at=last, idle_due_at=last + timedelta(minutes=30))
    assert idle_due(status, None) == last + timedelta(minutes=30)
    assert idle_due(status, last) is None  # ran for this message already
    assert idle_due(status, last - timedelta(hours=1)) == last + timedelta(minutes=30)
    assert idle_due(MemoryStatus(last_user_message_at=last), None) is None  # nothing owed
    assert idle_due(None, None) is None


def test_a_stored_block_keeps_the_mark_of_another_conversation() -> None:
    items: list[Recalled] = [replace(_fact(1), elsewhere=True), _fact(2), replace(_passage(3), elsewhere=True)]
    stored = items_to_json(items)
    assert "elsewhere" not in stored[1]
    assert items_from_json(stored) == items
