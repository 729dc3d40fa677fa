from __future__ import annotations

import pytest

from engine.cutting import BoundaryScores, boundary_ranks, covered_prefix, cut, cut_stretch, uncut_runs
from engine.episodes import Episode, EpisodeState
from engine.units import closed_units, units_of
from tests.unit.engine.conversations import T0, stored, turn


def flat(n: int) -> list[BoundaryScores]:
    return [BoundaryScores(0.0, 0.0)] * n


def test_cut_fits_whole_history_in_one_episode() -> None:
    assert cut([10, 10, 10], flat(3), max_tokens=30) == [(0, 3)]


def test_cut_splits_at_best_ranked_boundary() -> None:
    scores = flat(6)
    scores[4] = BoundaryScores(first=0.9, last=0.0)  # unit 4 opens a concept...
    scores[3] = BoundaryScores(first=0.0, last=0.8)  # ...and unit 3 closes one
    assert cut([10] * 6, scores, max_tokens=40) == [(0, 4), (4, 6)]


def test_cut_scores_are_only_an_order() -> None:
    scores = [BoundaryScores(first=a, last=b) for a, b in [(0.1, 0.2), (0.5, 0.3), (0.2, 0.9), (0.7, 0.1)]]
    squashed = [BoundaryScores(first=s.first**3, last=s.last / 10) for s in scores]
    assert boundary_ranks(scores) == boundary_ranks(squashed)
    assert cut([5] * 4, scores, max_tokens=10) == cut([5] * 4, squashed, max_tokens=10)


def test_cut_sizes_decide_how_many_cuts() -> None:
    assert len(cut([10] * 8, flat(8), max_tokens=80)) == 1
    assert len(cut([10] * 8, flat(8), max_tokens=40)) == 2
    assert all(sum([10] * (e - s)) <= 20 for s, e in cut([10] * 8, flat(8), max_tokens=20))


def test_cut_respects_minimum_on_both_sides() -> None:
    scores = flat(4)
    scores[1] = BoundaryScores(first=1.0, last=0.0)
    scores[0] = BoundaryScores(first=0.0, last=1.0)
    # The best boundary (before unit 1) would leave one unit on the left; the minimum is two.
    assert cut([10] * 4, scores, max_tokens=30, min_units=2) == [(0, 2), (2, 4)]


def test_cut_leaves_an_oversized_unit_whole() -> None:
    assert cut([100, 5], flat(2), max_tokens=50) == [(0, 1), (1, 2)]
    assert cut([100], flat(1), max_tokens=50) == [(0, 1)]


def test_cut_rejects_missing_scores() -> None:
    with pytest.raises(ValueError):
        cut([1, 2], flat(1), max_tokens=5)


def test_cut_history_builds_live_episodes_from_closed_units() -> None:
    messages = stored([*turn(1, calls=[1]), *turn(2, calls=[2]), *turn(3, closed=False)])
    units = closed_units(units_of(messages), 3)
    episodes = cut_stretch(units, scores={}, max_tokens=40)
    assert all(e.state is EpisodeState.LIVE for e in episodes)
    assert episodes[0].first_seq == 1 and episodes[-1].last_seq == messages[-2].seq
    covered = [seq for e in episodes for seq in range(e.first_seq, e.last_seq + 1)]
    assert covered == [m.seq for m in messages[:-1]]
    assert all(e.last_turn < 3 for e in episodes)


def test_uncut_runs_are_the_stretches_between_episodes() -> None:
    messages = stored([item for n in range(1, 7) for item in turn(n, calls=[n])])
    units = units_of(messages)
    first = cut_stretch(units[2:5], scores={}, max_tokens=10_000)  # one episode in the middle
    runs = uncut_runs(units, first)
    assert [[u.first_seq for u in run] for run in runs] == [
        [u.first_seq for u in units[:2]], [u.first_seq for u in units[5:]]]
    assert uncut_runs(units, []) == [units]


def test_covered_prefix_stops_at_the_first_gap() -> None:
    def episode(first: int, last: int) -> Episode:
        return Episode(id=f"ep-{first}-{last}", state=EpisodeState.SEALED, first_seq=first, last_seq=last,
                       first_turn=first, last_turn=last, tokens=1, at=T0)

    assert covered_prefix([]) == 0
    assert covered_prefix([episode(5, 9), episode(1, 4)]) == 9
    assert covered_prefix([episode(1, 4), episode(7, 9)]) == 4
    assert covered_prefix([episode(2, 4)]) == 0
