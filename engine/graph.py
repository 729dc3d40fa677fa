"""The knowledge graph's rules, pure: how names fold into aliases, which name is canonical, and what a new
fact does to the facts it is judged against (merge, retire, or stand beside them in conflict).

The lane (`activities.graph`) asks the judge and applies these decisions; nothing here reads a clock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.claims import retirement

__all__ = [
    "FILLER_WORDS",
    "Action",
    "Claim",
    "Judged",
    "Relation",
    "fold",
    "more_specific",
    "plan_fact",
    "specificity",
]

_SPACES = re.compile(r"\s+")
_EDGES = " \t\n\"'`.,;:!?()[]{}"
# Words that make a name longer without making it more specific.
FILLER_WORDS = frozenset("the a an our my your their his her its this that".split())


class Relation(StrEnum):
    """What a newer fact does to an older one; mirrors the judge's verdicts."""

    UNRELATED = "unrelated"
    RESTATES = "restates"
    UPDATES = "updates"
    CONTRADICTS = "contradicts"


def fold(name: str) -> str:
    """The alias key of a name: case and spacing do not make another name."""
    return _SPACES.sub(" ", name.strip(_EDGES)).lower()


def specificity(name: str) -> tuple[int, int, int]:
    """How much a name pins down: its proper-name and numbered words first, then its other words, then length."""
    tokens = [t for t in _SPACES.split(name.strip(_EDGES)) if t and t.lower() not in FILLER_WORDS]
    proper = sum(1 for t in tokens if t[:1].isupper() or any(c.isdigit() for c in t) or "_" in t or "-" in t)
    return proper, len(tokens), len(name)


def more_specific(current: str, candidate: str) -> str:
    """The canonical of two names of one entity when neither is already used: the most specific."""
    return candidate if specificity(candidate) > specificity(current) else current


@dataclass(frozen=True)
class Claim:
    """A fact as the graph's rules need it: its key, whose word it rests on, and any conflict it is in."""

    key: str
    source: str = "unknown"
    conflict_with: str | None = None
    kind: str = "fact"
    settled: bool = False  # an open question something already answered


@dataclass(frozen=True)
class Judged:
    """An older fact with the judge's verdict on what the new fact does to it."""

    old: Claim
    relation: Relation
    score: float


@dataclass(frozen=True)
class Action:
    """The plan for one new fact: merge it into a fact held, retire older ones, or hold a conflict open.

    `retire` lists (old key, retired by key); `retired_as` how each was retired (`engine.claims.retirement`:
    correction, revision, update); `conflicts` the older user-stated facts the new one disputes; `settled` the
    facts whose conflict ends because its other side is retired or restated; `answers` the open questions the
    new fact settles; `revises` the earlier claim of the same voice it revises; `correction` that the new fact
    is a correction (the user overruled another voice).
    """

    merge_into: str | None = None
    retire: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[str, ...] = ()
    settled: tuple[str, ...] = ()
    source_upgrade: bool = False  # the fact kept now rests on the user's word too
    retired_as: tuple[tuple[str, str], ...] = ()
    answers: tuple[str, ...] = ()
    revises: str | None = None
    correction: bool = False


def _disputes_user(old: Claim, new: Claim) -> bool:
    # An assistant's inference does not silently overrule what the user said; a user's correction always wins.
    return old.source == "user" and new.source == "assistant"


def _answers(old: Claim, new: Claim) -> bool:
    # A fact judged to restate, move on or contradict an unanswered question is its answer, not its replacement.
    return old.kind == "open_question" and not old.settled and new.kind != "open_question"


def plan_fact(new: Claim, judged: Sequence[Judged]) -> Action:
    """Decide what a new fact does, given verdicts on the current facts it was compared with."""
    answers = tuple(j.old.key for j in judged if j.relation is not Relation.UNRELATED and j.score >= 0.5
                    and _answers(j.old, new))
    judged = [j for j in judged if j.old.key not in answers and not (j.old.kind == "open_question" and
                                                                     new.kind != "open_question")]
    restated = [j for j in judged if j.relation is Relation.RESTATES and j.score >= 0.5]
    # The fact that stands for the new one: itself, or the best fact it restates (ties to the oldest key order
    # the caller gave, so a replay decides the same).
    keep = max(restated, key=lambda j: j.score).old if restated else None
    survivor = keep.key if keep else new.key
    retire: list[tuple[str, str]] = []
    conflicts: list[str] = []
    settled: set[str] = set()
    retired_as: dict[str, str] = {}
    for j in judged:
        if j.old.key == survivor or j.score < 0.5:
            continue
        if j.relation in (Relation.CONTRADICTS, Relation.UPDATES):
            if _disputes_user(j.old, new):
                conflicts.append(j.old.key)
                continue
            retire.append((j.old.key, survivor))
            retired_as[j.old.key] = retirement(old_source=j.old.source, new_source=new.source, new_kind=new.kind)
            if j.old.conflict_with:
                settled.add(j.old.conflict_with)
    if keep is not None and keep.conflict_with and new.source == "user":
        # The user restated one side of an open conflict: that side stands, the other retires.
        other = keep.conflict_with
        if other not in {key for key, _ in retire}:
            retire.append((other, survivor))
            retired_as[other] = "correction"
        settled.add(survivor)
    retired = {key for key, _ in retire}
    revisions = [key for key, _ in retire if retired_as.get(key) == "revision"]
    return Action(
        merge_into=keep.key if keep else None,
        retire=tuple(retire),
        conflicts=tuple(conflicts) if keep is None else (),
        settled=tuple(sorted(settled - retired)),
        source_upgrade=keep is not None and new.source == "user" and keep.source != "user",
        retired_as=tuple((key, retired_as.get(key, "update")) for key, _ in retire),
        answers=answers if keep is None else (),
        revises=revisions[0] if revisions and keep is None else None,
        correction=keep is None and "correction" in retired_as.values(),
    )
