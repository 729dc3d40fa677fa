"""The embedded judge's graph judgments: is a name this entity, and what does a newer fact do to an older one.

Both read the graph's structure, not only the sentences: an entity is judged with all its aliases (one
definite clash, another surname or number, vetoes it); a fact is judged as a claim with its subject and
object, so "Dana owns the checkout migration" then "Raj owns the checkout migration" (same relation and
object, another subject) is a contradiction, and a changed number or date on the same relation moves it on.
"""

from __future__ import annotations

import math
import re

from engine.graph import fold
from providers.judge import ContradictionVerdict, EntityMention, FactClaim, FactRelation, SameEntityVerdict
from providers.wording import antonym_clash, containment, jaccard, name_relation, words

__all__ = ["claim", "relation_of", "same_entity_of"]

# Relations an entity can hold with many objects at once: another object adds, it does not replace.
_MANY = frozenset("use like include support know speak mention attend join work read need want enjoy".split())
# Words saying the value changed: the newer fact replaces the older one's object.
_CHANGE = frozenset("moved move now changed change instead switched switch replaced replace rescheduled "
                    "postponed pushed became become no longer renamed reassigned handed took over".split())
# Where work stands: two different ones on the same thing mean the milestone moved on.
_STATUS = frozenset("blocked unblocked done finished complete completed started underway under way progress "
                    "next pending approved rejected shipped launched merged deployed released cancelled "
                    "paused resumed open closed waiting ready review drafted signed agreed decided".split())
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_DATE_WORDS = frozenset(_WEEKDAYS + _MONTHS + "today tomorrow yesterday tonight week month quarter q1 q2 q3 q4"
                        .split())
_TOKEN = re.compile(r"[a-z0-9]+", re.IGNORECASE)


def claim(item: str | FactClaim) -> FactClaim:
    return item if isinstance(item, FactClaim) else FactClaim(note=item)


def _confidence(margin: float) -> float:
    return round(1.0 / (1.0 + math.exp(-margin)), 4)


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


def same_entity_of(left: EntityMention, right: EntityMention, similarity: float, threshold: float,
                   scale: float) -> SameEntityVerdict:
    """One name against an entity known by several: any clash vetoes, any alias or same name accepts."""
    names_left = [left.name, *left.aliases]
    names_right = [right.name, *right.aliases]
    relations = {name_relation(a, b) for a in names_left for b in names_right}
    # Two dates, days or numbers that differ are two values, however close they embed (Wednesday, Thursday).
    clash = any(_values(a) and _values(b) and _values(a) != _values(b) for a in names_left for b in names_right)
    if "conflict" in relations or clash:
        return SameEntityVerdict(same=False, score=0.05)
    if "same" in relations:
        return SameEntityVerdict(same=True, score=0.99)
    if "alias" in relations:
        return SameEntityVerdict(same=True, score=max(0.75, _confidence((similarity - threshold) / scale)))
    score = _confidence((similarity - threshold) / max(scale, 1e-3) * 2)
    return SameEntityVerdict(same=score >= 0.5, score=score)


def _values(text: str) -> frozenset[str]:
    """Numbers, dates and identifiers: the values a relation can change."""
    found = {t for t in _tokens(text) if any(c.isdigit() for c in t) or t in _DATE_WORDS}
    return frozenset(found)


def _differs(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if fold(a) == fold(b):
        return False
    return name_relation(a, b) not in ("same", "alias")


def relation_of(old: FactClaim, new: FactClaim, similarity: float, topic: float, restate: float) -> \
        ContradictionVerdict:
    """What `new` does to `old`, from their words, their entities and how close they mean."""
    a, b = words(old.note), words(new.note)
    entities_a = words(f"{old.subject} {old.object}").content
    entities_b = words(f"{new.subject} {new.object}").content
    rel_a, rel_b = a.content - entities_a, b.content - entities_b
    same_subject = bool(old.subject) and not _differs(old.subject, new.subject)
    same_object = bool(old.object) and not _differs(old.object, new.object)
    structured = bool(old.subject and new.subject)
    overlap = jaccard(a.content, b.content)
    same_topic = similarity >= topic or overlap >= 0.4 or (structured and (same_subject or same_object)
                                                            and similarity >= topic - 0.15)
    if not same_topic:
        return ContradictionVerdict(FactRelation.UNRELATED, 0.8)
    if (a.negations % 2) != (b.negations % 2) or antonym_clash(a, b):
        return ContradictionVerdict(FactRelation.CONTRADICTS, 0.9)
    values_a, values_b = _values(old.note), _values(new.note)
    new_tokens = _tokens(new.note)
    change_cue = bool(new_tokens & _CHANGE)
    if structured and same_subject != same_object:
        # One end kept, the other replaced: a substitution, unless the relation holds many at once.
        kept_rel = jaccard(rel_a, rel_b) >= 0.5 or not (rel_a ^ rel_b) or change_cue
        many = bool({w[:5] for w in rel_a | rel_b} & {w[:5] for w in _MANY})
        if old.milestone and new.milestone and (_tokens(old.note) & _STATUS) != (new_tokens & _STATUS):
            return ContradictionVerdict(FactRelation.UPDATES, 0.8)
        if kept_rel and not many:
            kind = FactRelation.UPDATES if values_a and values_b and values_a != values_b and not change_cue \
                else FactRelation.CONTRADICTS
            return ContradictionVerdict(kind, 0.8)
        return ContradictionVerdict(FactRelation.UNRELATED, 0.6)
    status_a, status_b = _tokens(old.note) & _STATUS, new_tokens & _STATUS
    if status_a and status_b and status_a != status_b and (old.milestone or new.milestone):
        return ContradictionVerdict(FactRelation.UPDATES, 0.8)
    if values_a != values_b and values_b and values_a:
        # Same relation, another number or date: progress (40% then 70%) or a move (Wednesday then Thursday).
        kind = FactRelation.CONTRADICTS if change_cue or (values_a | values_b) & _DATE_WORDS else \
            FactRelation.UPDATES
        return ContradictionVerdict(kind, 0.8)
    if change_cue and overlap < 0.9 and (rel_a ^ rel_b or values_b - values_a):
        return ContradictionVerdict(FactRelation.CONTRADICTS, 0.7)
    extra = containment(b.content, a.content)  # how much of the newer is already in the older
    if extra >= 0.75 or (similarity >= restate and extra >= 0.5):
        return ContradictionVerdict(FactRelation.RESTATES, _confidence((similarity - topic) * 10))
    # It adds detail, or says another thing about the same entities: both stand.
    return ContradictionVerdict(FactRelation.UNRELATED, 0.6)
