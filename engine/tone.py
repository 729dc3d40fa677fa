"""The user's usual tone in one memory, and how far a message departs from it: the intensity half of salience.

A message's tone is four numbers: the share of its words in capitals, its exclamation marks per sentence, its
length (log of words) and its share of intensifiers ("really", "never", "urgent"). The baseline keeps running
statistics of each (count, mean and sum of squared deviations, Welford's update) over the memory's user
messages in order. A message is judged against the baseline as it stood before it, shrunk toward a prior for
a new memory: the shrunk spread keeps the distance between the person's mean and the prior, so a person who
always writes in capitals is not a spike after a handful of messages, while a terse person's first capitals
are. Intensity is the largest upward departure, in spreads, mapped onto [0, 1].
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

__all__ = ["FEATURES", "ToneBaseline", "intensity", "tone_of"]

# Feature name -> (prior mean, prior spread, weight): a typical chat user, and how much a spike in it counts.
# Length counts half: a long message is engagement more than force.
FEATURES: Mapping[str, tuple[float, float, float]] = {
    "capitals": (0.03, 0.06, 1.0),
    "exclamations": (0.1, 0.3, 1.0),
    "length": (3.0, 1.0, 0.5),
    "intensifiers": (0.02, 0.03, 1.0),
}
# How many messages the prior is worth: the person's own style takes over after a handful.
PRIOR_WEIGHT = 5.0
# Within this many spreads is the person's normal; at SPIKE spreads or more, intensity is 1.
CALM = 1.0
SPIKE = 4.0

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.!?]+")
_INTENSIFIERS = frozenset("""
    absolutely always asap completely critical definitely desperately extremely furious hate immediately
    insane literally must never seriously so terrible totally unacceptable urgent urgently utterly very worst
    really damn ridiculous
""".split())


def _capitals(text: str) -> float:
    """The share of words written in capitals, counting only runs of two or more (or a message all in capitals):
    an acronym (API, QA) alone is not shouting, and identifiers with digits (LTH-1042) are not words at all."""
    words = [w for token in text.split() if not any(c.isdigit() for c in token) for w in _WORD.findall(token)]
    if not words:
        return 0.0
    upper = [len(w) >= 2 and w.isupper() for w in words]
    if all(u or len(w) < 2 for u, w in zip(upper, words, strict=True)) and any(upper):
        return 1.0
    shouted = sum(1 for i, u in enumerate(upper)
                  if u and ((i > 0 and upper[i - 1]) or (i + 1 < len(upper) and upper[i + 1])))
    return shouted / len(words)


def tone_of(text: str) -> dict[str, float]:
    """A message's tone features."""
    words = _WORD.findall(text)
    capitals = _capitals(text)
    sentences = max(1, len([s for s in _SENTENCE_END.split(text) if s.strip()]))
    exclamations = min(3.0, text.count("!") / sentences)
    intensifiers = sum(1 for w in words if w.lower() in _INTENSIFIERS) / len(words) if words else 0.0
    return {"capitals": capitals, "exclamations": exclamations, "length": math.log1p(len(words)),
            "intensifiers": intensifiers}


@dataclass(frozen=True)
class ToneBaseline:
    """Running statistics of the user's tone in one memory, through the message `through_seq`."""

    messages: int = 0
    through_seq: int = 0
    # Feature -> (mean, sum of squared deviations from it).
    stats: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def fold(self, tone: Mapping[str, float], *, seq: int) -> ToneBaseline:
        """The baseline with one more user message (Welford's update); a message already folded changes nothing."""
        if seq <= self.through_seq:
            return self
        n = self.messages + 1
        stats = dict(self.stats)
        for name in FEATURES:
            mean, m2 = stats.get(name, (0.0, 0.0))
            x = tone.get(name, 0.0)
            delta = x - mean
            mean += delta / n
            stats[name] = (mean, m2 + delta * (x - mean))
        return replace(self, messages=n, through_seq=seq, stats=stats)

    def usual(self, name: str) -> tuple[float, float]:
        """(mean, spread) of a feature, the person's own shrunk toward the prior by PRIOR_WEIGHT messages.

        The spread is the posterior one: the prior's variance, the person's own, and the gap between their mean
        and the prior's, so few messages unlike the prior widen it rather than make everything a spike."""
        prior_mean, prior_spread, _ = FEATURES[name]
        n, k = self.messages, PRIOR_WEIGHT
        mean, m2 = self.stats.get(name, (prior_mean, 0.0)) if n else (prior_mean, 0.0)
        shrunk = (n * mean + k * prior_mean) / (n + k)
        variance = (k * prior_spread**2 + m2 + n * k / (n + k) * (mean - prior_mean) ** 2) / (n + k)
        # Never tighter than half the prior's spread: a perfectly steady writer's normal jitter is no spike.
        return shrunk, max(math.sqrt(variance), prior_spread / 2)

    def departure(self, tone: Mapping[str, float]) -> float:
        """The largest weighted upward departure of a message from the usual, in spreads (0 when none)."""
        worst = 0.0
        for name, (_, _, weight) in FEATURES.items():
            mean, spread = self.usual(name)
            worst = max(worst, weight * (tone.get(name, 0.0) - mean) / spread)
        return worst


def intensity(baseline: ToneBaseline, tones: Iterable[Mapping[str, float]]) -> float:
    """How forcefully the loudest of these messages departs from the baseline, in [0, 1]: 0 within CALM
    spreads of the usual, 1 at SPIKE spreads or more. No user message: 0."""
    worst = max((baseline.departure(t) for t in tones), default=0.0)
    return min(1.0, max(0.0, (worst - CALM) / (SPIKE - CALM)))
