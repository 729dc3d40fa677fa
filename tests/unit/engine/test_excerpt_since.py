"""An excerpt carries the records that replaced what its turns said: shown under it, kept through storage."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.blocks.recall_block import recall_block
from engine.recall.grouping import RecalledFact, RecalledPassage
from store.repositories.recall_blocks import items_from_json, items_to_json

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NEW = RecalledFact(key="f2", id=2, note="The launch moved to Thursday.", subject="launch", object="Thursday",
                   at=AT, first_turn=9, last_turn=9)
EXCERPT = RecalledPassage(id=7, text="user: We launch on Wednesday.", first_turn=3, last_turn=3, at=AT, since=(NEW,))


def test_the_replacement_is_shown_under_the_excerpt() -> None:
    text, items = recall_block([EXCERPT], budget=500, count_text=lambda t: len(t) // 4)
    assert text is not None and items == [EXCERPT]
    lines = text.splitlines()
    quoted = next(i for i, line in enumerate(lines) if "Wednesday" in line)
    assert "Thursday" in lines[quoted + 1] and "replacing" in lines[quoted + 1]


def test_a_stored_block_keeps_the_replacement() -> None:
    assert items_from_json(items_to_json([EXCERPT, NEW])) == [EXCERPT, NEW]
    # A block stored before excerpts carried replacements reads back with none.
    old = {"kind": "passage", "id": 7, "text": "x", "first_turn": 1, "last_turn": 1, "at": AT.isoformat()}
    assert items_from_json([old]) == [RecalledPassage(id=7, text="x", first_turn=1, last_turn=1, at=AT)]
