"""The gateway's cache of a memory: built change by change (what a decorate reads after each move of the
mechanism version) it holds what one read of everything would, and `Prefix` shares a growing history."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cutting import covered_prefix
from engine.episodes import Episode, EpisodeState, hidden_spans
from engine.facts import Fact
from engine.traces import Trace, fact_activations
from service.memory_cache import MemoryContents, Prefix

T0 = datetime(2026, 3, 1, tzinfo=UTC)
NEXT = {EpisodeState.LIVE: EpisodeState.LEAVING, EpisodeState.LEAVING: EpisodeState.SEALED,
        EpisodeState.SEALED: EpisodeState.FORGOTTEN}


@dataclass
class Store:
    """What Postgres holds, with each row's change stamp, moved one step at a time as the writers move it."""

    version: int = 0
    episodes: dict[str, tuple[int, Episode]] = field(default_factory=dict)
    facts: dict[str, tuple[int, Fact, str | None, bool]] = field(default_factory=dict)  # stamp, fact, merged, in force
    traces: list[tuple[int, Trace]] = field(default_factory=list)
    next_seq: int = 1

    def step(self, action: tuple[str, int]) -> None:
        kind, pick = action
        self.version += 1
        stamp = self.version
        if kind == "cut":
            size = pick % 4 + 1
            first = self.next_seq
            key = f"ep-{first}"
            self.next_seq += size + (pick % 3 == 0)  # now and then a gap no episode holds
            episode = Episode(id=key, state=EpisodeState.LIVE, first_seq=first, last_seq=first + size - 1,
                              first_turn=first, last_turn=first + size - 1, tokens=size, at=T0)
            self.episodes[key] = (stamp, episode)
            self.traces.append((stamp, Trace(at=T0, score=1.0, counted=True, episode_id=key, encoding=True)))
        elif kind == "move" and self.episodes:
            key = sorted(self.episodes)[pick % len(self.episodes)]
            episode = self.episodes[key][1]
            if episode.state in NEXT:
                self.episodes[key] = (stamp, replace(episode, state=NEXT[episode.state]))
        elif kind == "trace" and self.episodes:
            key = sorted(self.episodes)[pick % len(self.episodes)]
            fact = sorted(self.facts)[pick % len(self.facts)] if self.facts and pick % 3 else None
            self.traces.append((stamp, Trace(at=T0 + timedelta(minutes=pick), score=0.5, counted=True,
                                             episode_id=key, fact_id=fact)))
        elif kind == "fact" and self.episodes:
            key = f"f{len(self.facts)}"
            on = sorted(self.episodes)[pick % len(self.episodes)]
            fact = Fact(id=key, note=f"note {key}", subject="s", object="o", milestone=False, episode_ids=(on,),
                        at=T0, first_turn=1, last_turn=1)
            self.facts[key] = (stamp, fact, None, True)
        elif kind == "merge" and len(self.facts) > 1:
            # As the graph merges: a restatement into a fact that stands; a fact that absorbed others stays.
            standing = [k for k, (_, _, _, live) in self.facts.items() if live]
            absorbed = {into for _, _, into, _ in self.facts.values() if into}
            merging = [k for k in standing if k not in absorbed]
            if len(standing) > 1 and merging:
                old = merging[pick % len(merging)]
                into = [k for k in standing if k != old][pick % (len(standing) - 1)]
                self.facts[old] = (stamp, self.facts[old][1], into, False)

    def standing(self, key: str | None) -> str | None:
        return self.facts[key][2] or key if key is not None and key in self.facts else key

    def read(self, after: int | None) -> dict:
        """What a decorate reads of the rows stamped after `after` (everything, when None)."""
        changed = (lambda stamp: True) if after is None else (lambda stamp: stamp > after)
        return {
            "version": self.version,
            "episodes": [e for stamp, e in sorted(self.episodes.values(), key=lambda r: r[1].first_seq)
                         if changed(stamp)],
            "traces": [replace(t, fact_id=self.standing(t.fact_id)) for stamp, t in self.traces if changed(stamp)],
            "merged": {} if after is None else {k: into for k, (stamp, _, into, _) in self.facts.items()
                                                if into and changed(stamp)},
            "facts": [f for stamp, f, _, live in self.facts.values() if live and changed(stamp)],
            "gone": [k for k, (stamp, _, _, live) in self.facts.items() if not live and changed(stamp)],
        }


actions = st.lists(st.tuples(st.sampled_from(["cut", "cut", "move", "move", "trace", "trace", "fact", "merge"]),
                             st.integers(0, 50)), min_size=20, max_size=80)


@settings(deadline=None, max_examples=200)
@given(actions, st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_reading_only_what_changed_holds_what_reading_everything_would(
    steps: list[tuple[str, int]], reads: list[int]
) -> None:
    store = Store()
    known = MemoryContents.empty().updated(**store.read(None))
    position = 0
    for every in reads * 20:  # a decorate after every few changes, until the changes run out
        for action in steps[position:position + every]:
            store.step(action)
        position += every
        known = known.updated(**store.read(known.version))
    whole = MemoryContents.empty().updated(**store.read(None))
    episodes = [e for _, e in store.episodes.values()]

    assert known.version == whole.version == store.version
    assert known.hidden() == whole.hidden() == hidden_spans(episodes)
    assert known.covered() == whole.covered() == covered_prefix(episodes)
    assert [f.id for f in known.facts] == [f.id for f in whole.facts]
    for seq in range(0, store.next_seq + 2):
        # Every remembered episode, and every forgotten one reaching `seq` or later, with its latest state.
        expected = sorted((e for e in episodes if e.state is not EpisodeState.FORGOTTEN or e.last_seq >= seq),
                          key=lambda e: e.first_seq)
        assert known.episodes_from(seq) == whole.episodes_from(seq) == expected
    remembered = known.episodes_from(store.next_seq)
    traces = known.traces_for(remembered, known.in_force.values())
    assert Counter(traces) == Counter(whole.traces_for(remembered, whole.in_force.values()))
    # What the engine sums: a merged fact's traces count for the fact that stands, each once.
    in_force = [k for k, (_, _, _, live) in store.facts.items() if live]
    assert fact_activations(in_force, traces, T0) == fact_activations(
        in_force, [replace(t, fact_id=store.standing(t.fact_id)) for _, t in store.traces
                   if t.episode_id in {e.id for e in remembered} or t.fact_id is not None], T0)


def test_a_prefix_extended_twice_from_the_same_point_keeps_both_histories_apart() -> None:
    start = Prefix([1, 2, 3])
    committed = start.extended([4, 5])
    rolled_back_then_retried = start.extended([9])  # the list already holds 4, 5: copied, not overwritten
    assert list(committed) == [1, 2, 3, 4, 5]
    assert list(rolled_back_then_retried) == [1, 2, 3, 9]
    assert committed[-1] == 5 and committed[1:3] == [2, 3] and len(committed) == 5
    assert list(start) == [1, 2, 3] and start[-1] == 3 and start[2:10] == [3]
