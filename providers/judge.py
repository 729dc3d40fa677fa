"""The judgments the mechanism asks of a model, as one batch protocol and its result types.

    score_boundaries     each unit of a stretch as first and as last message of a concept (cutting)
    judge_about          is this fact about that episode (traces)
    rate_relevance       a candidate fact against the recent dialogue, unrelated to central (the recall walk)
    judge_distill        was a recalled fact relevant, and was it already said (distill)
    judge_same_entity    are two names one entity (the knowledge graph)
    judge_contradiction  does a new fact restate, update (a milestone moves on) or contradict an old one
    judge_acts           what kind of moment each episode was: its act (salience)

Every score is a confidence in [0, 1]; a yes is a score of at least one half.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from engine.cutting import BoundaryScores
from engine.entities import Description
from engine.graph import Relation
from engine.salience import Act
from providers.usage import UsageScope

__all__ = [
    "AboutVerdict",
    "ActVerdict",
    "ContradictionVerdict",
    "DistillVerdict",
    "EntityMention",
    "FactClaim",
    "Judge",
    "Relevance",
    "RelevanceVerdict",
    "SameEntityVerdict",
]


class Relevance(IntEnum):
    """The walk's four levels; the engine decides which level leads on and which is kept."""

    UNRELATED = 0
    TANGENTIAL = 1
    RELEVANT = 2
    CENTRAL = 3


@dataclass(frozen=True, slots=True)
class AboutVerdict:
    about: bool
    score: float


@dataclass(frozen=True, slots=True)
class ActVerdict:
    """An episode's act (engine.salience.Act) and the judge's confidence in it."""

    act: Act
    score: float


@dataclass(frozen=True, slots=True)
class RelevanceVerdict:
    level: Relevance
    score: float


@dataclass(frozen=True, slots=True)
class DistillVerdict:
    """`keep` is what distill acts on: relevant to the conversation and not already said in it."""

    relevant: bool
    already_said: bool
    score: float

    @property
    def keep(self) -> bool:
        return self.relevant and not self.already_said


@dataclass(frozen=True, slots=True)
class EntityMention:
    """A name as the memory holds it, with the facts it appears in as context, the entity's other names, and
    what the memory knows of it (roles, ties) to tell namesakes apart."""

    name: str
    context: str = ""
    aliases: tuple[str, ...] = ()
    description: Description = Description()


@dataclass(frozen=True, slots=True)
class FactClaim:
    """A fact with the graph's structure: its sentence, its subject and object (canonical names), milestone.

    Judging facts as claims lets a judge see a substitution ("Dana owns X", then "Raj owns X") or a changed
    value on the same relation, which the sentences' meaning alone hides."""

    note: str
    subject: str = ""
    object: str = ""
    milestone: bool = False


@dataclass(frozen=True, slots=True)
class SameEntityVerdict:
    same: bool
    score: float


@dataclass(frozen=True, slots=True)
class ContradictionVerdict:
    relation: Relation
    score: float

    @property
    def contradicts(self) -> bool:
        return self.relation is Relation.CONTRADICTS


# Whose word an extracted fact rests on: the user's (said or confirmed), the assistant's alone, or unclear.
EXTRACTED_SOURCES = ("user", "assistant", "extracted")


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """A fact a model read out of a stretch of conversation, as the note tool takes one, with its source."""

    note: str
    subject: str
    object: str
    source: str = "extracted"


class Judge(Protocol):
    """Batch judgments; each returns one verdict per input item, in order."""

    async def score_boundaries(
        self, units: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[BoundaryScores]: ...

    async def judge_about(
        self, facts: Sequence[str], episodes: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[list[AboutVerdict]]:
        """A row per fact, a column per episode."""
        ...

    async def rate_relevance(
        self, dialogue: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[RelevanceVerdict]: ...

    async def judge_distill(
        self, conversation: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[DistillVerdict]: ...

    async def judge_same_entity(
        self, pairs: Sequence[tuple[EntityMention, EntityMention]], *, scope: UsageScope | None = None
    ) -> list[SameEntityVerdict]: ...

    async def judge_contradiction(
        self, pairs: Sequence[tuple[str | FactClaim, str | FactClaim]], *, scope: UsageScope | None = None
    ) -> list[ContradictionVerdict]:
        """Each pair is (old fact, new fact), as sentences or as claims with their entities."""
        ...

    async def judge_acts(self, episodes: Sequence[str], *, scope: UsageScope | None = None) -> list[ActVerdict]:
        """Each episode as `role: text` lines (engine.texts.messages_text): who said what decides the act."""
        ...

    async def extract_facts(self, stretches: Sequence[str], *, scope: UsageScope | None = None
                            ) -> list[list[ExtractedFact]]:
        """The facts worth keeping about the person in each stretch of conversation (`role: text` lines);
        a judge without an extraction model finds none."""
        ...
