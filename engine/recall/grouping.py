"""Grouping what recall found. Facts go together when they share entities; a group takes the name of the
entity with the most links among them, and the newest group comes first. A retired fact appears only next to
its replacement; facts that one part of the message found sit under that part; passages become dated excerpts.
Grouping only orders: it never drops an item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from engine.graph import fold

__all__ = ["Group", "Grouped", "RecalledFact", "RecalledPassage", "Recalled", "admissible", "group", "trim"]


@dataclass(frozen=True)
class RecalledFact:
    """A fact recall found, its entities under their canonical names."""

    key: str
    id: int
    note: str
    subject: str
    object: str
    at: datetime
    first_turn: int
    last_turn: int
    # The fact that replaced it, when a newer one retired it: shown only beside that one, as an earlier value.
    retired_by: str | None = None
    # Found only by this part of the message's own search: shown under the part.
    part: str | None = None
    # How it was retired (engine.claims.retirement): a correction, one voice's revision, or an update.
    retired_as: str | None = None
    # Found in the user's graph, noted in another of their conversations: its turns are that conversation's.
    elsewhere: bool = False
    # In a user's graph: the pk of the conversation it was noted in (None in a conversation's own memory).
    origin_pk: int | None = None


@dataclass(frozen=True)
class RecalledPassage:
    """An excerpt of sealed conversation, with its turns and time; `since`: the facts that later replaced a claim
    made in those turns, shown with it, so an excerpt never shows an earlier value alone."""

    id: int
    text: str
    first_turn: int
    last_turn: int
    at: datetime
    since: tuple[RecalledFact, ...] = ()
    # Quiet turns of another of the user's conversations, found in the user's graph.
    elsewhere: bool = False
    # In a user's graph: the pk of the conversation these turns were said in.
    origin_pk: int | None = None


Recalled = RecalledFact | RecalledPassage


@dataclass(frozen=True)
class Group:
    """A heading and its facts in the order shown (an earlier value right after the fact that replaced it)."""

    name: str
    facts: tuple[RecalledFact, ...]


@dataclass(frozen=True)
class Grouped:
    groups: tuple[Group, ...] = ()
    parts: tuple[Group, ...] = ()
    passages: tuple[RecalledPassage, ...] = ()

    def items(self) -> list[Recalled]:
        return [f for g in (*self.groups, *self.parts) for f in g.facts] + list(self.passages)


def _identity(item: Recalled) -> tuple[str, str | int]:
    return ("fact", item.key) if isinstance(item, RecalledFact) else ("passage", item.id)


def admissible(items: Sequence[Recalled], *, in_facts_block: frozenset[str] = frozenset(),
               in_view: frozenset[int] = frozenset()) -> list[Recalled]:
    """What may be shown, in rank order: not in the facts block already (by key), nor in an earlier recall
    block still in view (by id), each once, and a retired fact only when the fact that replaced it is shown."""
    seen: set[tuple[str, str | int]] = set()
    kept: list[Recalled] = []
    for item in items:
        if _identity(item) in seen or (isinstance(item, RecalledFact) and (
                item.key in in_facts_block or item.id in in_view)):
            continue
        seen.add(_identity(item))
        kept.append(item)
    return _with_replacements(kept)


def _with_replacements(items: Sequence[Recalled]) -> list[Recalled]:
    # Until nothing changes: dropping an earlier value may leave the one it replaced without its replacement.
    kept = list(items)
    while True:
        shown = {item.key for item in kept if isinstance(item, RecalledFact)}
        fewer = [i for i in kept if not (isinstance(i, RecalledFact) and i.retired_by and i.retired_by not in shown)]
        if len(fewer) == len(kept):
            return kept
        kept = fewer


def trim(items: Sequence[Recalled], fits: Callable[[Sequence[Recalled]], bool]) -> list[Recalled]:
    """The best-ranked items that fit: the lowest-ranked go first (a retired fact goes with its replacement).

    What is kept is the longest fitting prefix (with replacements), found by halving: each `fits` renders and
    counts the whole block, so dropping one item at a time cost a render per item on every recall."""
    kept = list(items)
    if not kept or fits(kept):
        return kept
    fitting, too_long = 0, len(kept)  # the empty block always fits
    while too_long - fitting > 1:
        middle = (fitting + too_long) // 2
        if fits(_with_replacements(kept[:middle])):
            fitting = middle
        else:
            too_long = middle
    return _with_replacements(kept[:fitting])


def _neighbourhoods(facts: Sequence[RecalledFact]) -> list[list[RecalledFact]]:
    """Facts joined when they share an entity, directly or through others (union-find over names)."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for fact in facts:
        a, b = root(fold(fact.subject)), root(fold(fact.object))
        if a != b:
            parent[max(a, b)] = min(a, b)
    clusters: dict[str, list[RecalledFact]] = {}
    for fact in facts:
        clusters.setdefault(root(fold(fact.subject)), []).append(fact)
    return list(clusters.values())


def _newest_first(facts: Sequence[RecalledFact]) -> list[RecalledFact]:
    return sorted(facts, key=lambda f: (-f.at.timestamp(), -f.last_turn, f.key))


def _named(facts: Sequence[RecalledFact], earlier: dict[str, list[RecalledFact]]) -> Group:
    counts: Counter[str] = Counter()
    names: dict[str, str] = {}
    subjects: Counter[str] = Counter(fold(f.subject) for f in facts)
    for fact in facts:
        for name in {fold(fact.subject): fact.subject, fold(fact.object): fact.object}.items():
            counts[name[0]] += 1
            names.setdefault(name[0], name[1])
    # Most connected; among equals, the one facts speak about (a subject) before what they say of it.
    top = min(counts, key=lambda n: (-counts[n], -subjects[n], n))
    return Group(names[top].strip() or top, _beside(_newest_first(facts), earlier))


def _beside(facts: Sequence[RecalledFact], earlier: dict[str, list[RecalledFact]]) -> tuple[RecalledFact, ...]:
    """Each fact followed by the earlier values it replaced, and theirs in turn."""
    out: list[RecalledFact] = []
    for fact in facts:
        out.append(fact)
        out += _beside(earlier.get(fact.key, ()), earlier)
    return tuple(out)


def group(items: Sequence[Recalled]) -> Grouped:
    """Every item, placed: `items` as `admissible` leaves them."""
    facts = [i for i in items if isinstance(i, RecalledFact)]
    shown = {f.key for f in facts}
    earlier: dict[str, list[RecalledFact]] = {}
    for fact in facts:
        if fact.retired_by and fact.retired_by in shown:
            earlier.setdefault(fact.retired_by, []).append(fact)
    current = [f for f in facts if not (f.retired_by and f.retired_by in shown)]
    for values in earlier.values():
        values.sort(key=lambda f: (-f.at.timestamp(), f.key))
    by_part: dict[str, list[RecalledFact]] = {}
    for fact in current:
        if fact.part:
            by_part.setdefault(fact.part, []).append(fact)
    groups = [_named(cluster, earlier) for cluster in _neighbourhoods([f for f in current if not f.part])]
    groups.sort(key=lambda g: (-max(f.at.timestamp() for f in g.facts if f.retired_by not in shown), g.name))
    parts = [Group(part, _beside(_newest_first(fs), earlier)) for part, fs in by_part.items()]
    passages = sorted((i for i in items if isinstance(i, RecalledPassage)),
                      key=lambda p: (-p.at.timestamp(), -p.last_turn, p.id))
    return Grouped(tuple(groups), tuple(parts), tuple(passages))
