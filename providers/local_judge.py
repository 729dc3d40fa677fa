"""The embedded judge: deterministic judgments from embeddings and words, no generative model.

Thresholds come from the scores of the batch at hand (the memory's own facts, episodes and dialogue): a
robust location and spread of the pooled similarities, shrunk toward a prior for the embedding model while
the sample is small. So a memory where everything is about pricing needs a closer match to call a fact
"about" an episode than a memory of unrelated chores does. Words cover what embeddings cannot: negation,
antonyms, numbers, names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from contracts.errors import InvalidInput
from engine.cutting import BoundaryScores
from engine.recall.parts import split_parts
from providers.embedder import Embedder, pooled
from providers.judge import (
    AboutVerdict,
    ActVerdict,
    ContradictionVerdict,
    DistillVerdict,
    EntityMention,
    ExtractedFact,
    FactClaim,
    Relevance,
    RelevanceVerdict,
    SameEntityVerdict,
)
from providers.local_acts import acts_of
from providers.local_graph import claim, relation_of, same_entity_of
from providers.usage import UsageScope
from providers.wording import containment, sentence_parts, words

__all__ = ["LocalJudge", "relative_threshold"]

Matrix = npt.NDArray[np.float32]

# Cosine levels typical of MiniLM-L6 for unrelated, loosely related and same-topic sentences; they only anchor
# small samples, the batch's own distribution takes over as it grows.
_PRIOR_UNRELATED = 0.12
_PRIOR_SCALE = 0.10
_PSEUDO_COUNT = 8
_BOUNDARY_CUES_START = (
    "let's move on",
    "next,",
    "moving on",
    "switching to",
    "new topic",
    "another thing",
    "by the way",
    "now let's",
    "on another note",
    "separately",
    "different question",
)
_BOUNDARY_CUES_END = (
    "thanks",
    "thank you",
    "that's all",
    "that is all",
    "perfect",
    "done.",
    "great, ",
    "sounds good",
    "all set",
)


def relative_threshold(
    sample: npt.ArrayLike, *, k: float, prior_loc: float = _PRIOR_UNRELATED, prior_scale: float = _PRIOR_SCALE
) -> tuple[float, float]:
    """(threshold, scale): `k` robust spreads above the sample's typical score, shrunk toward the prior."""
    values = np.asarray(sample, dtype=np.float64).ravel()
    n = values.size
    if n:
        loc = float(np.median(values))
        scale = max(float(1.4826 * np.median(np.abs(values - loc))), 0.03)
    else:
        loc, scale = prior_loc, prior_scale
    weight = n / (n + _PSEUDO_COUNT)
    loc = weight * loc + (1 - weight) * prior_loc
    scale = weight * scale + (1 - weight) * prior_scale
    return loc + k * scale, scale


def _confidence(score: float, threshold: float, scale: float) -> float:
    """A logistic around the threshold: one half exactly at it, so 'yes' and 'score >= 0.5' agree."""
    return round(1.0 / (1.0 + math.exp(-(score - threshold) / max(scale, 1e-3) * 2.0)), 4)


def _ranks(values: Sequence[float]) -> list[float]:
    """Percentile ranks in [0, 1], ties sharing the mean rank."""
    n = len(values)
    if n == 1:
        return [1.0]
    order = sorted(range(n), key=lambda i: values[i])
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        for m in range(i, j + 1):
            ranks[order[m]] = (i + j) / 2 / (n - 1)
        i = j + 1
    return ranks


class LocalJudge:
    """Every judgment from one embedder (cached by the factory) and the word features in `wording`."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def _embed(self, texts: Sequence[str]) -> Matrix:
        # Usage is not recorded for the embedded judge: it calls no paid service of its own.
        return await self._embedder.embed(list(texts))

    async def score_boundaries(
        self, units: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[BoundaryScores]:
        if not units:
            return []
        vectors = await self._embed(units)
        n = len(units)
        starts, ends = [], []
        for i in range(n):
            before = vectors[max(0, i - 2) : i]
            after = vectors[i + 1 : i + 3]
            # Novelty against what came before marks a start; against what follows, an end.
            start = 1.0 - float(vectors[i] @ _centroid(before)) if len(before) else 2.0
            end = 1.0 - float(vectors[i] @ _centroid(after)) if len(after) else 2.0
            lowered = units[i].lower()
            start += 0.3 * any(cue in lowered for cue in _BOUNDARY_CUES_START)
            end += 0.3 * any(cue in lowered for cue in _BOUNDARY_CUES_END)
            starts.append(start)
            ends.append(end)
        return [BoundaryScores(first=s, last=e) for s, e in zip(_ranks(starts), _ranks(ends), strict=True)]

    async def _about_scores(self, facts: Sequence[str], episodes: Sequence[str]) -> tuple[Matrix, Matrix]:
        parts = [sentence_parts(text) for text in episodes]
        flat = [part for chunk in parts for part in chunk]
        vectors = await self._embed([*facts, *episodes, *flat])
        fact_v = vectors[: len(facts)]
        episode_v = vectors[len(facts) : len(facts) + len(episodes)]
        part_v = vectors[len(facts) + len(episodes) :]
        scores = np.zeros((len(facts), len(episodes)), dtype=np.float32)
        offset = 0
        for j, chunk in enumerate(parts):
            best_part = (fact_v @ part_v[offset : offset + len(chunk)].T).max(axis=1)
            # A fact names one detail of an episode: its best part counts most, the whole episode a little.
            scores[:, j] = 0.7 * best_part + 0.3 * (fact_v @ episode_v[j])
            offset += len(chunk)
        return scores, episode_v

    async def judge_about(
        self, facts: Sequence[str], episodes: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[list[AboutVerdict]]:
        if not facts or not episodes:
            return [[] for _ in facts]
        scores, episode_v = await self._about_scores(facts, episodes)
        # The null sample: every fact against every episode (most pairs are not "about") and the episodes
        # against each other (cutting made them different concepts).
        between = episode_v @ episode_v.T
        null = np.concatenate([scores.ravel(), between[np.triu_indices(len(episodes), 1)]])
        threshold, scale = relative_threshold(null, k=2.5)
        return [
            [
                AboutVerdict(about=c >= 0.5, score=c)
                for c in (_confidence(float(s), threshold, scale) for s in row)
            ]
            for row in scores
        ]

    async def _relevance_scores(self, dialogue: str, facts: Sequence[str]) -> npt.NDArray[np.float64]:
        # The dialogue in recall's own parts, as the hot path split and embedded it a moment before, with the
        # notes of the facts that led the walk here (each a line, embedded when it joined the graph): all of
        # it is in the embedder's cache. Its whole is pooled from the parts, not embedded again for each step.
        parts = split_parts(dialogue) or [dialogue]
        vectors = await self._embed([*facts, *parts])
        fact_v, part_v = vectors[: len(facts)], vectors[len(facts) :]
        whole_v = pooled(parts, part_v)
        semantic = 0.5 * (fact_v @ whole_v) + 0.5 * (fact_v @ part_v.T).max(axis=1)
        said = words(dialogue)
        # Shared names and numbers tie a fact to the dialogue more surely than meaning alone.
        lexical = [
            containment(words(f).content | words(f).numbers, said.content | said.numbers) for f in facts
        ]
        return np.asarray(semantic, dtype=np.float64) + 0.15 * np.asarray(lexical)

    async def rate_relevance(
        self, dialogue: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[RelevanceVerdict]:
        if not facts:
            return []
        scores = await self._relevance_scores(dialogue, facts)
        tangential, scale = relative_threshold(scores, k=1.0)
        relevant, _ = relative_threshold(scores, k=2.5)
        central, _ = relative_threshold(scores, k=4.0)
        verdicts = []
        for s in scores:
            level = (
                Relevance.CENTRAL
                if s >= central
                else Relevance.RELEVANT
                if s >= relevant
                else Relevance.TANGENTIAL
                if s >= tangential
                else Relevance.UNRELATED
            )
            verdicts.append(RelevanceVerdict(level=level, score=_confidence(float(s), relevant, scale)))
        return verdicts

    async def judge_distill(
        self, conversation: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[DistillVerdict]:
        levels = await self.rate_relevance(conversation, facts)
        said = words(conversation)
        verdicts = []
        for fact, verdict in zip(facts, levels, strict=True):
            own = words(fact)
            # Already said: the conversation holds every one of the fact's numbers and its words, or, when the
            # fact carries a number or identifier, that and half its words (the reply that gave the code).
            held = containment(own.content, said.all_stems)
            values = {w for w in own.content if any(c.isdigit() for c in w)}
            already = own.numbers <= said.numbers and (
                held >= 0.8 or (bool(own.numbers or values) and values <= said.all_stems and held >= 0.5))
            verdicts.append(
                DistillVerdict(
                    relevant=verdict.level >= Relevance.RELEVANT, already_said=already, score=verdict.score
                )
            )
        return verdicts

    async def judge_same_entity(
        self, pairs: Sequence[tuple[EntityMention, EntityMention]], *, scope: UsageScope | None = None
    ) -> list[SameEntityVerdict]:
        if not pairs:
            return []
        for index, pair in enumerate(pairs):
            if len(pair) != 2:
                raise InvalidInput("each pair holds two mentions", field=f"pairs[{index}]")
        texts = [f"{m.name}. {m.context}".strip() for pair in pairs for m in pair]
        vectors = await self._embed(texts)
        similarity = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
        threshold, scale = relative_threshold(similarity, k=3.0)
        return [same_entity_of(left, right, float(sim), threshold, scale)
                for (left, right), sim in zip(pairs, similarity, strict=True)]

    async def judge_contradiction(
        self, pairs: Sequence[tuple[str | FactClaim, str | FactClaim]], *, scope: UsageScope | None = None
    ) -> list[ContradictionVerdict]:
        if not pairs:
            return []
        claims = [(claim(old), claim(new)) for old, new in pairs]
        vectors = await self._embed([c.note for pair in claims for c in pair])
        similarity = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
        # Facts of one memory compared with each other: the prior stands for "same topic" until the
        # batch is big enough to say what is typical here.
        topic, _ = relative_threshold(similarity, k=2.5, prior_loc=0.2, prior_scale=0.12)
        restate, _ = relative_threshold(similarity, k=5.0, prior_loc=0.2, prior_scale=0.12)
        return [relation_of(old, new, float(sim), topic, restate)
                for (old, new), sim in zip(claims, similarity, strict=True)]

    async def judge_acts(self, episodes: Sequence[str], *, scope: UsageScope | None = None) -> list[ActVerdict]:
        # Rules over who said which words (providers/local_acts.py): no embedding tells a correction from a lookup.
        return acts_of(episodes)

    async def extract_facts(self, stretches: Sequence[str], *, scope: UsageScope | None = None
                            ) -> list[list[ExtractedFact]]:
        # No extraction model here: a quiet conversation reaches the user's graph as passages alone.
        return [[] for _ in stretches]


def _centroid(rows: Matrix) -> Matrix:
    mean = rows.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean
