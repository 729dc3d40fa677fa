"""Claim kinds: what stays in front of the model because of what kind of claim a fact is, and what a newer
claim does to an older one of the same or another voice.

A constraint in force stays in the facts block from the moment its turns leave the view for as long as the
memory holds it: its room is set aside with what no fade can shrink, so no fade can take it out. Constraints
and corrections go ahead of other facts of the same activation. An open question stays open until a later fact
settles it. When a voice contradicts its own earlier claim it is a revision (both kept, dated, shown together);
when the user contradicts another voice it is a correction.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from engine.facts import KINDS, Fact

__all__ = [
    "FIRST_KINDS",
    "KINDS",
    "in_front",
    "kind_rank",
    "reserved_facts",
    "retirement",
    "settled_question",
]

# Shown ahead of other facts of the same activation: a rail not to cross, and where the model was wrong.
FIRST_KINDS = frozenset({"constraint", "correction"})
_WORD = re.compile(r"[a-z0-9][a-z0-9_.\-/]*")
_STOP = frozenset("a an the of to is are was were be do does did we i you it this that what which who how when "
                  "where why for in on at by with and or not should would can could will".split())


def kind_rank(fact: Fact) -> int:
    """0 for the kinds shown first, 1 for the rest."""
    return 0 if fact.kind in FIRST_KINDS else 1


def in_front(fact: Fact, *, sealed: Collection[str], in_view: Collection[str], weigh_kinds: bool) -> bool:
    """Whether the facts block shows `fact`: it was written against a sealed episode, or (kinds weighed) it is a
    constraint none of whose episodes is still in view, sealed or forgotten alike, or a correction whose own turns
    are out of view while those of the claim it corrected are still in it (an old value never stands alone)."""
    episodes = fact.episode_ids
    if any(e in sealed for e in episodes):
        return True
    if not weigh_kinds or any(e in in_view for e in episodes):
        return False
    return fact.kind == "constraint" or any(e in in_view for e in fact.corrects_episodes)


def reserved_facts(facts: Sequence[Fact], *, in_view: Collection[str], weigh_kinds: bool) -> list[Fact]:
    """The facts whose room is set aside with what no fade can shrink: constraints out of the view's messages."""
    if not weigh_kinds:
        return []
    return [f for f in facts if f.kind == "constraint" and not any(e in in_view for e in f.episode_ids)]


def retirement(*, old_source: str, new_source: str, new_kind: str) -> str:
    """What a newer claim that contradicts or moves on an older one is: `correction` (the user overruling another
    voice, or a note saying so), `revision` (one voice changing its own claim), else `update`."""
    if new_kind == "correction" or (new_source == "user" and old_source in ("assistant", "tool")):
        return "correction"
    if new_source == old_source and new_source in ("user", "assistant"):
        return "revision"
    return "update"


def _words(text: str) -> set[str]:
    return {w.strip(".-/") for w in _WORD.findall(text.lower())} - _STOP - {""}


def settled_question(settles: str, open_questions: Sequence[Fact], *, least: float = 0.5) -> str | None:
    """The open question a note entry's `settles` names: the one whose words it shares most (at least `least`
    of the smaller set of words), newest first among equals; None when none is near enough."""
    wanted = _words(settles)
    if not wanted:
        return None
    best: tuple[float, float, str] | None = None
    for question in open_questions:
        if question.kind != "open_question" or question.settled_by is not None:
            continue
        words = _words(question.note)
        if not words:
            continue
        share = len(wanted & words) / min(len(wanted), len(words))
        if share >= least and (best is None or (share, question.at.timestamp()) > best[:2]):
            best = (share, question.at.timestamp(), question.id)
    return best[2] if best else None


