"""Recall helpers: a message split into its parts, ranked lists fused, recalled facts grouped.

The searches and the walk need models and the database; what is pure about recall lives here.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from engine.facts import Fact

__all__ = ["FactGroup", "entity_key", "fuse_ranks", "group_facts", "split_parts"]

K = TypeVar("K", bound=Hashable)

# A sentence ends at . ! ? (or their run) followed by space; lines end where the user broke them.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _window(words: list[str], size: int, stride: int) -> list[str]:
    windows: list[str] = []
    start = 0
    while True:
        windows.append(" ".join(words[start:start + size]))
        if start + size >= len(words):
            return windows
        start += stride


def split_parts(
    text: str, *, min_chars: int = 24, max_words: int = 60, overlap_words: int = 15
) -> list[str]:
    """Split a message into search parts (sentences or lines): tiny neighbours merge, long ones are windowed,
    so each distinct point in a message gets its own query."""
    pieces = [
        sentence.strip()
        for line in text.splitlines()
        for sentence in _SENTENCE_END.split(line)
        if sentence.strip()
    ]
    joined: list[str] = []
    for piece in pieces:
        if joined and len(joined[-1]) < min_chars:
            joined[-1] = f"{joined[-1]} {piece}"
        else:
            joined.append(piece)
    if len(joined) > 1 and len(joined[-1]) < min_chars:
        tail = joined.pop()
        joined[-1] = f"{joined[-1]} {tail}"
    parts: list[str] = []
    for piece in joined:
        words = piece.split()
        if len(words) > max_words:
            parts += _window(words, max_words, max(1, max_words - overlap_words))
        else:
            parts.append(piece)
    return parts


def fuse_ranks(rankings: Sequence[Sequence[K]], *, k: int = 60) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion: each list gives 1 / (k + rank) to its items; best fused score first."""
    scores: dict[K, float] = {}
    first_seen: dict[K, int] = {}
    for ranking in rankings:
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue  # a list that repeats an item does not vote twice for it
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(key, len(first_seen))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))


@dataclass(frozen=True)
class FactGroup:
    """A cluster of facts over linked entities, labelled by the entity with most links; newest fact first."""

    name: str
    facts: tuple[Fact, ...]


def entity_key(name: str) -> str:
    """Entities compare without case or extra spaces; the graph resolves names properly upstream."""
    return " ".join(name.casefold().split())


def group_facts(facts: Sequence[Fact]) -> list[FactGroup]:
    """Group recalled facts by the entity they sit around; nothing is dropped.

    The most connected entity (most distinct neighbours among these facts) takes every fact touching it,
    then the next among what is left, and so on; groups with the newest facts come first.
    """
    remaining = list(dict.fromkeys(facts))
    groups: list[FactGroup] = []
    while remaining:
        neighbours: dict[str, set[str]] = {}
        names: dict[str, str] = {}
        newest: dict[str, float] = {}
        for fact in remaining:
            ends = (entity_key(fact.subject), entity_key(fact.object))
            for key, other, raw in ((ends[0], ends[1], fact.subject), (ends[1], ends[0], fact.object)):
                neighbours.setdefault(key, set()).add(other)
                names.setdefault(key, raw.strip() or key)
                newest[key] = max(newest.get(key, float("-inf")), fact.at.timestamp())
        hub = min(neighbours, key=lambda key: (-len(neighbours[key] - {key}), -newest[key], key))
        taken = [f for f in remaining if hub in (entity_key(f.subject), entity_key(f.object))]
        remaining = [f for f in remaining if f not in taken]
        ordered = sorted(taken, key=lambda f: (-f.at.timestamp(), f.id))
        groups.append(FactGroup(name=names[hub] or "unnamed", facts=tuple(ordered)))
    return sorted(groups, key=lambda g: -g.facts[0].at.timestamp())
