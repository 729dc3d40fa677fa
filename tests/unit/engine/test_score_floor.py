"""The score floor: what of recall's unrated search hits may enter a block."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.recall.floor import LEAD_NEIGHBOURS, ScoreFloor, lead_of, over_floor
from store.repositories.recall_search import Searched

FLOOR = ScoreFloor(relative=0.5, touch=0.35)


def test_a_message_near_nothing_touches_nothing() -> None:
    assert not FLOOR.touches(worded=False, nearest=0.28)
    assert not FLOOR.touches(worded=False, nearest=None)
    assert FLOOR.touches(worded=False, nearest=0.36)
    assert FLOOR.touches(worded=True, nearest=0.1)  # its own words matched


def test_the_tail_under_half_the_best_stays_out() -> None:
    assert over_floor([(1, 0.049), (2, 0.030), (3, 0.016)], FLOOR) == [1, 2]
    assert over_floor([], FLOOR) == []


@pytest.mark.parametrize(("relative", "touch"), [(-0.1, 0.3), (1.5, 0.3), (0.5, 1.2)])
def test_a_floor_out_of_range_is_refused(relative: float, touch: float) -> None:
    with pytest.raises(ValueError):
        ScoreFloor(relative=relative, touch=touch)


def _searched(rankings: list[list[int]], *, nearest: float | None, worded: bool) -> Searched:
    searched = Searched()
    searched.broad = rankings
    searched.passages = rankings[:1]
    searched.nearest, searched.worded = nearest, worded
    return searched


def test_no_unrated_hit_for_a_message_that_touches_nothing() -> None:
    candidates = _searched([[4, 5, 6], [5, 6, 7]], nearest=0.2, worded=False).candidates()
    assert candidates.facts  # a search by meaning always has neighbours...
    assert candidates.unrated(FLOOR, facts=6, passages=2) == ([], [])  # ...none of which gets in


def test_a_touching_message_brings_its_best_hits_in() -> None:
    candidates = _searched([[4, 5, 6], [4, 5, 7]], nearest=0.6, worded=False).candidates()
    facts, passages = candidates.unrated(FLOOR, facts=6, passages=2)
    # 4 and 5 are first in both searches; 6 and 7 in one each, under half the best's fused score.
    assert facts == [4, 5]
    assert passages == [4, 5, 6][:2]


rankings = st.lists(st.lists(st.integers(0, 30), min_size=1, max_size=10, unique=True), min_size=1, max_size=4)


@given(rankings, st.floats(-1, 1), st.booleans())
def test_what_enters_is_the_best_of_the_hits_in_order(found: list[list[int]], nearest: float, worded: bool) -> None:
    candidates = _searched(found, nearest=nearest, worded=worded).candidates()
    facts, _ = candidates.unrated(FLOOR, facts=6, passages=2)
    if not (worded or nearest >= FLOOR.touch):
        assert facts == []
        return
    assert facts and facts[0] == candidates.facts[0]  # the best always enters a message that touches
    assert facts == [i for i in candidates.facts[:6] if i in facts]  # in the fused order
    best = candidates.fact_scores[candidates.facts[0]]
    assert all(candidates.fact_scores[i] >= 0.5 * best for i in facts)


def test_a_paraphrase_touches_when_its_nearest_stands_clear_of_the_rest() -> None:
    # Under `touch`, a nearest that leads the next by `lead` touches; one in a crowd does not.
    assert FLOOR.touches(worded=False, nearest=0.31, leads=[(0.31, 0.07)])
    assert not FLOOR.touches(worded=False, nearest=0.31, leads=[(0.31, 0.01)])
    assert not FLOOR.touches(worded=False, nearest=0.25, leads=[(0.25, 0.2)])  # under stand_out: too far
    assert lead_of([0.31, 0.24, 0.2, 0.19, 0.18]) == pytest.approx((0.31, 0.07))
    assert lead_of([0.31, 0.1]) is None  # too few neighbours to stand out among


@given(st.lists(st.lists(st.floats(-1, 1), min_size=1, max_size=8), max_size=4))
def test_touching_by_a_lead_needs_a_ranking_long_enough_and_near_enough(rankings: list[list[float]]) -> None:
    searched = Searched()
    searched.near([[(i, s) for i, s in enumerate(sorted(r, reverse=True))] for r in rankings])
    candidates = searched.candidates()
    expected = any(len(r) >= LEAD_NEIGHBOURS and max(r) >= FLOOR.stand_out
                   and max(r) - sorted(r, reverse=True)[1] >= FLOOR.lead for r in rankings) or \
        any(max(r) >= FLOOR.touch for r in rankings)
    assert candidates.touches(FLOOR) == expected
