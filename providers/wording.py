"""Word-level features the embedded judge needs because embeddings cannot see them.

"Raise prices" and "do not raise prices" embed close together; negation, antonyms, numbers and the shape of a
name are read from the words instead. English only, deliberately small: these tables decide edge cases, the
embeddings do the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Words",
    "antonym_clash",
    "containment",
    "jaccard",
    "name_relation",
    "sentence_parts",
    "stem",
    "words",
]

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'’-][a-z0-9]+)*|n't", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*(?:%|k|m|x)?$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

STOPWORDS = frozenset(
    """a an the and or but of to in on at by for with from as is are was were be been being it its this
    that these those we our you your i my me he she his her they them their there here then than so such
    do does did
    done has have had will would shall should can could may might must just also about into over after before
    up out if what which who whom whose when where why how all any each some more most other very too again
    let lets let's ok okay please thanks thank""".split()
)
NEGATORS = frozenset(
    "not no never none nobody nothing neither nor without cannot can't won't don't doesn't didn't "
    "isn't aren't "
    "wasn't weren't shouldn't wouldn't couldn't hasn't haven't hadn't n't".split()
)
_ANTONYM_PAIRS = [
    ("raise", "lower"),
    ("raise", "cut"),
    ("increase", "decrease"),
    ("increase", "reduce"),
    ("add", "remove"),
    ("approve", "reject"),
    ("approve", "deny"),
    ("accept", "reject"),
    ("accept", "decline"),
    ("allow", "forbid"),
    ("allow", "block"),
    ("enable", "disable"),
    ("include", "exclude"),
    ("start", "stop"),
    ("open", "close"),
    ("open", "closed"),
    ("on", "off"),
    ("up", "down"),
    ("win", "lose"),
    ("pass", "fail"),
    ("succeed", "fail"),
    ("true", "false"),
    ("yes", "no"),
    ("confirm", "cancel"),
    ("schedule", "cancel"),
    ("keep", "drop"),
    ("hire", "fire"),
    ("join", "leave"),
    ("buy", "sell"),
    ("before", "after"),
    ("more", "less"),
    ("higher", "lower"),
    ("above", "below"),
    ("public", "private"),
    ("available", "unavailable"),
    ("online", "offline"),
    ("required", "optional"),
    ("agree", "disagree"),
    ("like", "dislike"),
    ("support", "oppose"),
    ("expand", "shrink"),
    ("launch", "cancel"),
    ("ship", "postpone"),
    ("done", "pending"),
    ("finished", "unfinished"),
    ("complete", "incomplete"),
    ("valid", "invalid"),
    ("legal", "illegal"),
]
_NICKNAMES = {
    "bob": "robert",
    "rob": "robert",
    "robbie": "robert",
    "bill": "william",
    "will": "william",
    "liz": "elizabeth",
    "beth": "elizabeth",
    "kate": "katherine",
    "katie": "katherine",
    "mike": "michael",
    "alex": "alexander",
    "jim": "james",
    "jimmy": "james",
    "tom": "thomas",
    "dave": "david",
    "chris": "christopher",
    "sam": "samuel",
    "dan": "daniel",
    "danny": "daniel",
    "jen": "jennifer",
    "jenny": "jennifer",
    "matt": "matthew",
    "nick": "nicholas",
    "tony": "anthony",
    "andy": "andrew",
    "joe": "joseph",
    "steve": "steven",
    "ben": "benjamin",
    "greg": "gregory",
    "pat": "patricia",
    "sue": "susan",
    "meg": "margaret",
    "peggy": "margaret",
    "ted": "edward",
    "ed": "edward",
}
_HONORIFICS = frozenset("mr mrs ms miss dr prof sir madam the a an".split())


def stem(word: str) -> str:
    """A crude suffix strip, enough to make 'approved' meet 'approve' and 'raises' meet 'raise'."""
    word = word.lower().replace("’", "'")
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_ANTONYMS: dict[str, set[str]] = {}
for _left, _right in _ANTONYM_PAIRS:
    _ANTONYMS.setdefault(stem(_left), set()).add(stem(_right))
    _ANTONYMS.setdefault(stem(_right), set()).add(stem(_left))


@dataclass(frozen=True, slots=True)
class Words:
    """The parts of a text the judge compares: content stems, numbers, negation count."""

    content: frozenset[str]
    numbers: frozenset[str]
    negations: int
    all_stems: frozenset[str]


@lru_cache(maxsize=4096)
def words(text: str) -> Words:
    # Cached: the judge reads the same facts' notes again on every recall of a memory.
    tokens = [token.lower().replace("’", "'") for token in _TOKEN.findall(text)]
    numbers = {t.rstrip(".,") for t in tokens if _NUMBER.match(t)}
    negations = sum(1 for t in tokens if t in NEGATORS or t.endswith("n't"))
    stems = {stem(t) for t in tokens if t not in numbers}
    content = {
        stem(t)
        for t in tokens
        if t not in STOPWORDS and t not in NEGATORS and t not in numbers and len(t) > 1
    }
    return Words(frozenset(content), frozenset(numbers), negations, frozenset(stems))


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def containment(part: frozenset[str], whole: frozenset[str]) -> float:
    """Share of `part` found in `whole`."""
    return len(part & whole) / len(part) if part else 1.0


def antonym_clash(old: Words, new: Words) -> bool:
    """One side says a word whose opposite only the other side says."""
    for word in old.all_stems - new.all_stems:
        if _ANTONYMS.get(word, set()) & (new.all_stems - old.all_stems):
            return True
    return False


def sentence_parts(text: str, *, max_words: int = 60) -> list[str]:
    """Sentences and lines, short ones joined and long ones windowed, so each part is about one thing."""
    parts: list[str] = []
    buffer: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        if not sentence:
            continue
        tokens = sentence.split()
        while len(tokens) > max_words:
            parts.append(" ".join(tokens[:max_words]))
            tokens = tokens[max_words // 2 :]
        buffer.extend(tokens)
        if len(buffer) >= 8:
            parts.append(" ".join(buffer))
            buffer = []
    if buffer:
        if parts and len(buffer) < 4:
            parts[-1] = f"{parts[-1]} {' '.join(buffer)}"
        else:
            parts.append(" ".join(buffer))
    return parts or [text]


def _name_tokens(name: str) -> list[str]:
    tokens = [t.lower().strip(".'") for t in _TOKEN.findall(name)]
    return [_NICKNAMES.get(t, t) for t in tokens if t and t not in _HONORIFICS]


def name_relation(left: str, right: str) -> str:
    """How two names relate by their words alone: same, alias, conflict or unknown.

    `conflict` is a definite 'not the same': another surname, or another version or number.
    """
    a, b = _name_tokens(left), _name_tokens(right)
    if not a or not b:
        return "unknown"
    if a == b:
        return "same"
    numbers_a = {t for t in a if any(c.isdigit() for c in t)}
    numbers_b = {t for t in b if any(c.isdigit() for c in t)}
    if numbers_a != numbers_b and numbers_a and numbers_b:
        return "conflict"
    set_a, set_b = set(a), set(b)
    if set_a <= set_b or set_b <= set_a:
        return "alias"
    for short, long in ((a, b), (b, a)):
        if len(short) == 1 and len(long) > 1 and short[0] == "".join(t[0] for t in long):
            return "alias"
    if set_a & set_b and len(a) > 1 and len(b) > 1 and a[0] == b[0] and a[-1] != b[-1]:
        return "conflict"
    return "unknown"
