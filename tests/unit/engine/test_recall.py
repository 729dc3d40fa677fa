from __future__ import annotations

from engine.recall import fuse_ranks, group_facts, split_parts
from tests.unit.engine.test_blocks import fact


def test_split_parts_sentences_and_lines() -> None:
    text = (
        "The export failed again because the finance column is missing.\n"
        "Did legal come back on the refund line? Thanks."
    )
    assert split_parts(text) == [
        "The export failed again because the finance column is missing.",
        "Did legal come back on the refund line? Thanks.",
    ]


def test_split_parts_joins_short_ones() -> None:
    assert split_parts("Hi. Thanks. Ok.") == ["Hi. Thanks. Ok."]
    parts = split_parts("Yes. The migration to Postgres 16 finished overnight without errors.")
    assert parts == ["Yes. The migration to Postgres 16 finished overnight without errors."]


def test_split_parts_windows_long_ones() -> None:
    words = " ".join(f"w{i}" for i in range(150))
    parts = split_parts(words, max_words=60, overlap_words=15)
    assert len(parts) == 3
    assert parts[0].split()[-15:] == parts[1].split()[:15]
    assert parts[-1].split()[-1] == "w149"


def test_fuse_ranks_reciprocal_rank_fusion() -> None:
    fused = fuse_ranks([["a", "b", "c"], ["b", "a"], ["b"]], k=60)
    assert [key for key, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == 1 / 62 + 1 / 61 + 1 / 61


def test_fuse_ranks_ignores_a_repeat_within_one_list() -> None:
    assert dict(fuse_ranks([["a", "a"]]))["a"] == 1 / 61


def test_group_facts_named_for_most_connected_entity_newest_first_nothing_dropped() -> None:
    facts = [
        fact("f1", "Dana owns the checkout migration.", "Dana", "checkout migration", minutes=1),
        fact(
            "f2",
            "Checkout migration is blocked on the tax table.",
            "Checkout Migration",
            "tax table",
            minutes=9,
        ),
        fact("f3", "Checkout migration ships in March.", "checkout migration", "March", minutes=3),
        fact("f4", "Legal answers within two days.", "legal", "review requests", minutes=5),
    ]
    groups = group_facts(facts)
    assert [g.name for g in groups] == ["checkout migration", "legal"] or groups[0].name.casefold() == (
        "checkout migration"
    )
    assert [f.id for f in groups[0].facts] == ["f2", "f3", "f1"]
    assert sorted(f.id for g in groups for f in g.facts) == ["f1", "f2", "f3", "f4"]
    assert group_facts([]) == []
