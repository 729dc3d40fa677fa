"""The embedded judge's graph judgments: is a name this entity, and what does a newer fact do to an older one.

Both read the graph's structure, not only the sentences: an entity is judged with all its aliases (one
definite clash, another surname or number, vetoes it); a fact is judged as a claim with its subject and
object, so "Dana owns the checkout migration" then "Raj owns the checkout migration" (same relation and
object, another subject) is a contradiction, and a changed number or date on the same relation moves it on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from engine.entities import clashes, describes, holds_role, name_words
from engine.graph import FILLER_WORDS, Relation, fold
from providers.judge import ContradictionVerdict, EntityMention, FactClaim, SameEntityVerdict
from providers.wording import _name_tokens, antonym_clash, containment, jaccard, name_relation, words

__all__ = ["claim", "relation_of", "same_entity_of"]

# Relations an entity can hold with many objects at once: another object adds, it does not replace.
_MANY = frozenset("use like include support know speak mention attend join work read need want enjoy".split())
# Words saying the value changed: the newer fact replaces the older one's object.
_CHANGE = frozenset("moved move now changed change instead switched switch replaced replace rescheduled "
                    "postponed pushed became become longer renamed reassigned handed took extended delayed "
                    "shifted brought corrected actually".split())
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
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# A date as people write it: "7 May", "May 7th", "2026-03-14", a weekday, "tomorrow".
_DATE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+(?:{_MONTH})\b(?:\s+\d{{4}})?"
                   rf"|(?:{_MONTH})\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
                   rf"|\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTH})\b|{'|'.join(_WEEKDAYS)}|today|tomorrow|yesterday|tonight)",
                   re.IGNORECASE)


def claim(item: str | FactClaim) -> FactClaim:
    return item if isinstance(item, FactClaim) else FactClaim(note=item)


def _confidence(margin: float) -> float:
    return round(1.0 / (1.0 + math.exp(-margin)), 4)


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


def _name_words(name: str) -> list[str]:
    return [t for t in _name_tokens(name) if t not in FILLER_WORDS]


def _share_word(a: Sequence[str], b: Sequence[str]) -> bool:
    """A word in common, or one the start of the other (Postgres, PostgreSQL; email, emails)."""
    return any(x == y or (min(len(x), len(y)) >= 4 and (x.startswith(y) or y.startswith(x))) for x in a for y in b)


def _other_modifier(a: Sequence[str], b: Sequence[str]) -> bool:
    """Same head, other modifiers: "Berlin office" and "London office", "tax table" and "pricing table"."""
    return len(a) >= 2 and len(b) >= 2 and a[-1] == b[-1] and not _share_word(a[:-1], b[:-1])


def same_entity_of(left: EntityMention, right: EntityMention, similarity: float, threshold: float,
                   scale: float) -> SameEntityVerdict:
    """One name against an entity known by several: a definite clash vetoes, an alias or the same name accepts,
    and otherwise meaning decides, trusted only when the names share a word."""
    names_left = [left.name, *left.aliases]
    names_right = [right.name, *right.aliases]
    relations = {name_relation(a, b) for a in names_left for b in names_right}
    # Two dates, days or numbers that differ are two values, however close they embed (Wednesday, Thursday).
    clash = any(_values(a) and _values(b) and _values(a) != _values(b) for a in names_left for b in names_right)
    if "conflict" in relations or clash:
        return SameEntityVerdict(same=False, score=0.05)
    described = _by_description(left, right)
    if described is not None:
        return described
    if "same" in relations:
        return SameEntityVerdict(same=True, score=0.99)
    if "alias" in relations:
        return SameEntityVerdict(same=True, score=max(0.75, _confidence((similarity - threshold) / scale)))
    words_left = [_name_words(n) for n in names_left]
    words_right = [_name_words(n) for n in names_right]
    if any(_other_modifier(a, b) for a in words_left for b in words_right):
        return SameEntityVerdict(same=False, score=0.15)
    shared = any(_share_word(a, b) for a in words_left for b in words_right)
    # Short names embed close whatever they name (Lisbon, Porto): without a shared word, only near-identity.
    bar = threshold - scale if shared else max(threshold + 2 * scale, 0.85)
    score = _confidence((similarity - bar) / max(scale, 1e-3) * 2)
    return SameEntityVerdict(same=score >= 0.5, score=score)


def _by_description(left: EntityMention, right: EntityMention) -> SameEntityVerdict | None:
    """What the memory knows of a person settles namesakes: a role alone ("the CTO") is its holder; a name
    described otherwise than the entity it shares a name with ("Alex from the climbing gym", "Alex" the CTO) is
    another one; a description that fits is the same one. None when descriptions do not decide."""
    if not any(name_words(n) for n in (right.name, *right.aliases)):
        return None
    if not name_words(left.name):
        return SameEntityVerdict(same=True, score=0.9) if holds_role(left.name, right.description) else None
    if not any(name_words(left.name) <= name_words(n) for n in (right.name, *right.aliases)):
        return None  # not namesakes: the names decide
    if clashes(left.description, right.description):
        return SameEntityVerdict(same=False, score=0.1)
    if left.description and describes(left.description, right.description):
        return SameEntityVerdict(same=True, score=0.9)
    return None


def _values(text: str) -> frozenset[str]:
    """Numbers, dates and identifiers: the values a relation can change."""
    found = {t for t in _tokens(text) if any(c.isdigit() for c in t) or t in _DATE_WORDS}
    return frozenset(found)


def _dates(text: str) -> frozenset[str]:
    """The dates a note names, each as written (lower case)."""
    return frozenset(" ".join(m.group(0).lower().split()) for m in _DATE.finditer(text))


def _undated_values(text: str) -> frozenset[str]:
    """The values of a note outside its dates and times: amounts, shares, versions, identifiers."""
    return _values(_DATE.sub(" ", text)) - _DATE_WORDS


def _related(rel_a: frozenset[str], rel_b: frozenset[str]) -> bool:
    """Two notes' relation words could name one relation: they share a quarter of their words, or one says
    next to nothing beside its entities ("the launch is on 3 March"). Two long sentences about one person
    that share no such words say two things, whatever else they have in common."""
    return min(len(rel_a), len(rel_b)) <= 2 or jaccard(rel_a, rel_b) >= 0.25


def _mentions(note: str, name: str) -> bool:
    """Every word of the name is in the note: the entity is still spoken of."""
    wanted, said = words(name), words(note)
    need = wanted.content | wanted.numbers
    if not need or not need <= said.content | said.numbers:
        return False
    # A name of a number and stopwords ("May 19") is spoken of only with those words too: a bare 19 may be
    # another date's day.
    return bool(wanted.content) or wanted.all_stems <= said.all_stems


def _differs(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if fold(a) == fold(b):
        return False
    return name_relation(a, b) not in ("same", "alias")


def _substitution(old: FactClaim, new: FactClaim, rel_a: frozenset[str], rel_b: frozenset[str],
                  change_cue: bool) -> ContradictionVerdict:
    """One end kept, the other replaced: a substitution when the relation is the same and holds one at a time.

    The same relation: the same words, or one side's words all in the other's (an adverb more) when both say
    one. A change word counts only beside a value that changed: in everyday talk "now" or "actually" is in half
    the sentences, and two things one person did are not a substitution."""
    values_a, values_b = _values(old.note), _values(new.note)
    within = (rel_a <= rel_b or rel_b <= rel_a) and bool(rel_a) == bool(rel_b) and len(rel_a ^ rel_b) <= 2
    kept_rel = jaccard(rel_a, rel_b) >= 0.5 or within or \
        (change_cue and bool(values_a) and bool(values_b) and values_a != values_b and _related(rel_a, rel_b))
    many = bool({w[:5] for w in rel_a | rel_b} & {w[:5] for w in _MANY})
    if old.milestone and new.milestone and (_tokens(old.note) & _STATUS) != (_tokens(new.note) & _STATUS):
        return ContradictionVerdict(Relation.UPDATES, 0.8)
    if kept_rel and not many:
        kind = Relation.UPDATES if values_a and values_b and values_a != values_b and not change_cue \
            and not (values_a ^ values_b) & _DATE_WORDS else Relation.CONTRADICTS
        return ContradictionVerdict(kind, 0.8)
    return ContradictionVerdict(Relation.UNRELATED, 0.6)


def _changed_value(old: FactClaim, new: FactClaim, change_cue: bool, related: bool) -> ContradictionVerdict:
    """The same relation with another value. Said to change (moved, now, instead): a move or a correction.
    Another amount or share: progress (40% then 70%). Only another date: two dated things (a group on 7 May
    and on 20 May), both stand. Relation words that share nothing: two claims, both stand."""
    if not related:
        return ContradictionVerdict(Relation.UNRELATED, 0.6)
    if change_cue:
        return ContradictionVerdict(Relation.CONTRADICTS, 0.8)
    if _undated_values(old.note) != _undated_values(new.note) and _undated_values(new.note):
        return ContradictionVerdict(Relation.UPDATES, 0.8)
    return ContradictionVerdict(Relation.UNRELATED, 0.6)


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
        return ContradictionVerdict(Relation.UNRELATED, 0.8)
    related = _related(rel_a, rel_b)
    same_claim = overlap >= 0.5 or (structured and same_subject and same_object and jaccard(rel_a, rel_b) >= 0.5)
    if ((a.negations % 2) != (b.negations % 2) or antonym_clash(a, b)) and same_claim:
        # A reversal of the same claim; a "not" in a sentence about another thing of the same person is not one.
        return ContradictionVerdict(Relation.CONTRADICTS, 0.9)
    values_a, values_b = _values(old.note), _values(new.note)
    new_tokens = _tokens(new.note)
    change_cue = bool(new_tokens & _CHANGE)
    if structured and not same_subject and not same_object and not _mentions(new.note, old.subject) \
            and not _mentions(new.note, old.object):
        # Neither end shared: claims about other things, whatever their numbers.
        return ContradictionVerdict(Relation.UNRELATED, 0.7)
    swapped = not same_subject and _mentions(new.note, old.subject) or not same_object and \
        _mentions(new.note, old.object)
    if structured and same_subject != same_object and not swapped:
        return _substitution(old, new, rel_a, rel_b, change_cue)
    status_a, status_b = _tokens(old.note) & _STATUS, new_tokens & _STATUS
    if status_a and status_b and status_a != status_b and (old.milestone or new.milestone):
        return ContradictionVerdict(Relation.UPDATES, 0.8)
    if values_a != values_b and values_b and values_a:
        return _changed_value(old, new, change_cue, related)
    if not structured and change_cue and overlap < 0.9 and (rel_a ^ rel_b or values_b - values_a):
        # Without a subject and object to hold it to, a change said of the same topic replaces it.
        return ContradictionVerdict(Relation.CONTRADICTS, 0.7)
    extra = containment(b.content, a.content)  # how much of the newer is already in the older
    if len(b.content - a.content) >= 2 and containment(a.content, b.content) >= 0.75:
        # The newer says all the older does and more: detail added, both stand.
        return ContradictionVerdict(Relation.UNRELATED, 0.6)
    # Same two entities and nearly the same sentence: said again (an absolute bar, as a small batch has no spread).
    again = structured and same_subject and same_object and similarity >= 0.85
    if extra >= 0.75 or (min(restate, 0.85 if again else 1.0) <= similarity and extra >= 0.5):
        return ContradictionVerdict(Relation.RESTATES, _confidence((similarity - topic) * 10))
    # It adds detail, or says another thing about the same entities: both stand.
    return ContradictionVerdict(Relation.UNRELATED, 0.6)
