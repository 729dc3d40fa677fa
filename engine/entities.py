"""Resolving a mention among namesakes, pure: what the memory knows about an entity (its description) and
which entity a mention may denote given the judge's verdicts.

A description has two parts. Roles name the entity ("our CTO", "the user's sister"): a mention by a role alone
("the CTO") denotes whoever holds it. Ties say what it belongs to or comes from ("from the climbing gym",
"works on the platform team"): they tell namesakes apart but never name the entity. Both come from the
entity's own names and from its current facts that describe it ("Alex is our CTO."); a mention's come from its
name, an apposition beside it in its note ("Alex, our CTO, said ..."), and its note when that describes it.

The rule the lane applies: a name shared by two or more entities resolves only when the mention's own words
describe exactly one of them; a bare shared name stays unresolved, whatever a judge would guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Candidate",
    "Description",
    "Resolution",
    "clashes",
    "describe",
    "describes",
    "describe_mention",
    "holds_role",
    "name_words",
    "namesakes",
    "resolve",
    "role_head",
]

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# Words that carry no description: articles, possessives, conjunctions.
_FILLER = frozenset("the a an our my your their his her its this that and s new current now still also".split())
# What a tie starts with: a relation to another thing, not a name for this one.
_TIE_WORDS = frozenset("from at of in on for with".split())
_COPULA = re.compile(r"\s+(?:is|was|has been|became|remains|serves as|acts as)\s+(?:also\s+|now\s+|still\s+)?",
                     re.IGNORECASE)
_TIED = re.compile(r"\s+(?:works|worked|lives|lived|is based|was based|is|was|climbs|trains|joined|belongs)"
                   r"(?:\s+(?:on|at|in|for|with|from|to|a member of|part of))?\s+", re.IGNORECASE)
_ROLE_TIE = re.compile(r"^(?:from|based in|in|at|on|with|a member of|part of|member of)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Description:
    """What the memory knows about an entity: roles that name it, ties that place it (each a phrase)."""

    roles: tuple[str, ...] = ()
    ties: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.roles or self.ties)

    def merged(self, other: Description) -> Description:
        return Description(tuple(dict.fromkeys(self.roles + other.roles)),
                           tuple(dict.fromkeys(self.ties + other.ties)))


@dataclass(frozen=True)
class Candidate:
    """An entity a mention may denote: its id, every name it has, its description."""

    id: int
    names: tuple[str, ...]
    description: Description = Description()


@dataclass(frozen=True)
class Resolution:
    """The lane's decision: an entity (`entity_id`), a new one (neither set), or unresolved among `among`."""

    entity_id: int | None = None
    score: float = 0.0
    among: tuple[int, ...] = ()

    @property
    def unresolved(self) -> bool:
        return bool(self.among)


def _tokens(text: str) -> list[str]:
    # A possessive describes by its noun: "the user's sister" reads as "user sister".
    return _TOKEN.findall(re.sub(r"['’]s\b", "", text))


def _proper(token: str) -> bool:
    """A word of a proper name: capitalised (not an acronym such as CTO), or an identifier (v3, db-kestrel-9)."""
    if any(c.isdigit() for c in token) or "_" in token:
        return True
    return token[:1].isupper() and not (token.isupper() and len(token) > 1)


def _content(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _tokens(text) if t.lower() not in _FILLER)


def _phrase(text: str) -> str:
    return " ".join(_content(text))


def name_words(name: str) -> frozenset[str]:
    """The proper-name words of a name, lower case: "Alex" of "Alex from the climbing gym"."""
    return frozenset(t.lower() for t in _tokens(name) if _proper(t) and t.lower() not in _FILLER)


def _qualifiers(name: str) -> Description:
    """The description inside a name that has a proper part: "our PM Dana" (role PM), "Alex from the gym" (tie)."""
    tokens = [t for t in _tokens(name) if t.lower() not in _FILLER]
    if not any(_proper(t) for t in tokens):
        return Description()
    roles: list[str] = []
    for i, token in enumerate(tokens):
        if token.lower() in _TIE_WORDS:
            tie = _phrase(" ".join(tokens[i + 1:]))
            return Description(tuple(roles), (tie,) if tie else ())
        if not _proper(token):
            roles.append(token.lower())
    return Description((" ".join(roles),) if roles else ())


def _predicate(note: str, names: Iterable[str]) -> Description:
    """What a note says of an entity: beside its name ("met Alex, our CTO, at lunch"), and when it is the
    sentence's subject, what it is or belongs to ("Alex is our CTO." a role, "Priya works on X" a tie)."""
    sentence = note.strip().rstrip(".!")
    for name in sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True):
        spoken = re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", sentence, re.IGNORECASE)
        if spoken is None:
            continue
        rest = sentence[spoken.end():]
        apposition = re.match(r"\s*(?:,\s*([^,;()]+?)\s*(?:,|$)|\(\s*([^()]+?)\s*\))", rest)
        found = Description()
        if apposition:
            found = found.merged(_role_or_tie(apposition.group(1) or apposition.group(2)))
            rest = rest[apposition.end():]
        if re.fullmatch(r"(?:(?:the|our|my)\s+)?", sentence[:spoken.start()], re.IGNORECASE):
            copula = _COPULA.match(rest)
            if copula and not _ROLE_TIE.match(rest[copula.end():]):
                return found.merged(Description(roles=(_phrase(rest[copula.end():]),)))
            tied = _TIED.match(rest)
            if tied:
                return found.merged(Description(ties=(_phrase(_ROLE_TIE.sub("", rest[tied.end():])),)))
        return found
    return Description()


def _role_or_tie(text: str) -> Description:
    if text.lower().startswith(("who ", "which ", "that ")):
        return Description()
    if _ROLE_TIE.match(text):
        return Description(ties=(_phrase(_ROLE_TIE.sub("", text)),))
    # A role names no one else: "Alex, Dana and Raj" lists people, it does not describe Alex.
    if any(_proper(t) for t in _tokens(text) if t.lower() not in _FILLER):
        return Description()
    return Description(roles=(_phrase(text),))


def _clean(description: Description) -> Description:
    return Description(tuple(r for r in description.roles if r), tuple(t for t in description.ties if t))


def describe(names: Sequence[str], notes: Iterable[str]) -> Description:
    """An entity's description from its names and the current notes it is the subject of."""
    found = Description()
    for name in names:
        found = found.merged(_qualifiers(name))
    for note in notes:
        found = found.merged(_predicate(note, names))
    return _clean(found)


def describe_mention(name: str, note: str) -> Description:
    """A mention's own description: its name's qualifiers, and what its note says of it."""
    return _clean(_qualifiers(name).merged(_predicate(note, [name])))


def _matches(phrase: str, said: frozenset[str]) -> bool:
    """A phrase is matched by words that hold its head ("gym" of "climbing gym"): the head says what it is."""
    words = phrase.split()
    return bool(words) and words[-1] in said


def describes(mention: Description, known: Description) -> bool:
    """The mention's description picks out something the memory knows of the entity: a role or a tie."""
    roles = frozenset(w for r in mention.roles for w in r.split())
    ties = frozenset(w for t in mention.ties for w in t.split())
    return any(_matches(r, roles) for r in known.roles) or any(_matches(t, ties | roles) for t in known.ties)


def clashes(mention: Description, known: Description) -> bool:
    """Both described, and neither description holds anything of the other's: two namesakes, not one."""
    return bool(mention) and bool(known) and not describes(mention, known) and not describes(known, mention)


def holds_role(role_mention: str, known: Description) -> bool:
    """A mention by role alone ("the CTO") names an entity holding that role (every word of it in the role)."""
    said = frozenset(_content(role_mention))
    return bool(said) and any(_matches(r, said) and said <= frozenset(r.split()) for r in known.roles)


def role_head(name: str) -> str | None:
    """The word a mention by role alone turns on ("cto" of "the CTO"), to find its holder by; None for names."""
    words = _content(name)
    return words[-1] if words and not name_words(name) else None


def namesakes(name: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates with a name that holds every proper-name word of this one ("Alex" in "Alex from the gym")."""
    own = name_words(name)
    if not own:
        return []
    return [c for c in candidates if any(own <= name_words(n) for n in c.names)]


def resolve(name: str, description: Description, candidates: Sequence[Candidate],
            same: Mapping[int, float]) -> Resolution:
    """Which candidate a mention denotes, given the judge's yes verdicts (`same`: entity id to score).

    A name two or more entities share resolves only to the one the mention describes; a role alone resolves to
    its one holder; otherwise the judge's best yes stands, and no yes makes a new entity."""
    shared = namesakes(name, candidates)
    if len(shared) >= 2:
        if not description:
            return Resolution(among=tuple(c.id for c in shared))
        fitting = [c for c in shared if c.id in same and not clashes(description, c.description)]
        described = [c for c in fitting if describes(description, c.description)] or fitting
        if len(described) == 1:
            return Resolution(entity_id=described[0].id, score=same[described[0].id])
        if len(described) > 1:
            return Resolution(among=tuple(c.id for c in described))
        # Described, and none of the namesakes fits: one more of them, a new entity.
        return Resolution()
    if not name_words(name):
        holders = [c for c in candidates if c.id in same and any(name_words(n) for n in c.names)
                   and holds_role(name, c.description)]
        if len(holders) == 1:
            return Resolution(entity_id=holders[0].id, score=same[holders[0].id])
        if len(holders) > 1:
            return Resolution(among=tuple(c.id for c in holders))
    best = max(((score, -c.id) for c in candidates if (score := same.get(c.id)) is not None), default=None)
    return Resolution() if best is None else Resolution(entity_id=-best[1], score=best[0])
