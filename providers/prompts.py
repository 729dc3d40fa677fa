"""What the OpenAI-compatible judge asks, in Lethe's words, and the JSON schema each answer must fit.

Every answer is `{"items": [...]}` with one object per item asked about, each carrying the item's number
`i`, so a reply can be checked for completeness before it is believed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.salience import Act
from providers.judge import EntityMention, FactClaim

__all__ = ["TASKS", "Task", "claim_text", "clip", "mention", "numbered"]

_PREAMBLE = (
    "You are the judgment model of Lethe, a memory for a conversation with an AI assistant. Lethe cuts the "
    "conversation into episodes (stretches about one concept), keeps facts written from them in a knowledge "
    "graph, and recalls facts when they matter again. Judge only what is asked, from the text given. "
    "Answer with JSON only, one item per numbered input, keeping its number in `i`."
)


@dataclass(frozen=True, slots=True)
class Task:
    """One judgment: name (also the usage purpose), instructions, item fields, completion tokens per item."""

    name: str
    instructions: str
    fields: dict[str, Any]
    tokens_per_item: int

    @property
    def system(self) -> str:
        return f"{_PREAMBLE}\n\n{self.instructions}"

    def response_format(self) -> dict[str, Any]:
        item = {
            "type": "object",
            "properties": {"i": {"type": "integer"}, **self.fields},
            "required": ["i", *self.fields],
            "additionalProperties": False,
        }
        schema = {
            "type": "object",
            "properties": {"items": {"type": "array", "items": item}},
            "required": ["items"],
            "additionalProperties": False,
        }
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": schema, "strict": True}}


_SCORE = {"type": "number", "minimum": 0, "maximum": 1}

TASKS = {
    "boundaries": Task(
        name="score_boundaries",
        instructions=(
            "The units below are consecutive pieces of one conversation (a user message, or an assistant "
            "step with its tool calls and outputs). For each unit give `start`: how likely it is the first "
            "unit of a new concept, and `end`: how likely it is the last unit of one, each from 0 to 1. A "
            "concept is one task, question or subject the conversation stays with; it ends where the talk "
            "moves elsewhere."
        ),
        fields={"start": _SCORE, "end": _SCORE},
        tokens_per_item=24,
    ),
    "about": Task(
        name="judge_about",
        instructions=(
            "Below are facts and episodes of past conversation. Item i asks whether fact `fact` is about "
            "episode `episode`: the episode is where it was said, decided or done, or what the fact records "
            "or changes. Give `about` (true or false) and `score`, your confidence from 0 to 1 that it is "
            "about it."
        ),
        fields={"about": {"type": "boolean"}, "score": _SCORE},
        tokens_per_item=20,
    ),
    "relevance": Task(
        name="rate_relevance",
        instructions=(
            "Below is the recent dialogue and candidate facts remembered from earlier. Rate how much each "
            "fact matters for answering the dialogue's latest message: `unrelated` (nothing to do with it), "
            "`tangential` (same area, would not change the answer), `relevant` (helps the answer) or "
            "`central` (the answer depends on it)."
        ),
        fields={"level": {"type": "string", "enum": ["unrelated", "tangential", "relevant", "central"]}},
        tokens_per_item=14,
    ),
    "distill": Task(
        name="judge_distill",
        instructions=(
            "Below is the reply to a message and the message that followed it, and facts that were recalled "
            "for the first message. For each fact give `relevant`: true when the reply used it or the later "
            "message touches it; and `already_said`: true when the conversation itself already states it, so "
            "keeping it would only repeat."
        ),
        fields={"relevant": {"type": "boolean"}, "already_said": {"type": "boolean"}},
        tokens_per_item=18,
    ),
    "same_entity": Task(
        name="judge_same_entity",
        instructions=(
            "Each item is a pair of names from one conversation's knowledge graph, each with the facts it "
            "appears in and any other names it already has. Give `same`: true when both refer to one person, "
            "thing or project (a nickname, a shorter form, a title, an acronym), false when they are two; and "
            "`score`, your confidence from 0 to 1 that they are one. A different surname, version, number or "
            "date means two, and so does a clash with any of the other names. What the memory knows of each "
            "(`known as`: roles that name it; `tied to`: what it belongs to or comes from) tells namesakes "
            "apart: a role alone ('the CTO') is the one known as that role; a shared first name described "
            "differently on each side ('Alex from the climbing gym', 'Alex' known as CTO) is two people; a bare "
            "shared name that neither description fits may be either, so say false rather than guess."
        ),
        fields={"same": {"type": "boolean"}, "score": _SCORE},
        tokens_per_item=18,
    ),
    "contradiction": Task(
        name="judge_contradiction",
        instructions=(
            "Each item is an older fact and a newer fact, with their subject and object when known. Give "
            "`relation`: `contradicts` only when both cannot be true at once: the same subject and the same "
            "attribute or relation with another value (another owner, a moved day), a reversed decision, or a "
            "correction; `updates` when the newer one moves the same thing on (new numbers, progress, a milestone "
            "reached); `restates` when it says the same thing again in other words; `unrelated` when they are "
            "about different things, both simply hold, or the newer only adds detail. Two things one person did "
            "or said are both true: sharing a subject, a different date, or a word such as 'now' or 'actually' "
            "is not a contradiction. When unsure, say `unrelated`: both facts stand. Give `score`, your "
            "confidence from 0 to 1."
        ),
        fields={
            "relation": {"type": "string", "enum": ["unrelated", "restates", "updates", "contradicts"]},
            "score": _SCORE,
        },
        tokens_per_item=18,
    ),
    "acts": Task(
        name="judge_acts",
        instructions=(
            "Each episode below is a stretch of one conversation, as lines `role: text`. Give `act`, the kind of "
            "moment it was, judged by who did what: `correction` when the user sets straight something the "
            "assistant held or said (a changed date, a wrong name, 'no, it is ...'); `decision` when something is "
            "agreed, chosen, approved or rejected; `self_correction` when the assistant takes back or fixes what "
            "it said itself; `task` for ordinary work asked for and done; `lookup` for a routine question answered "
            "or a value looked up; `small_talk` for greetings, thanks and chat with nothing to keep. When several "
            "fit, take the first in that order. Give `score`, your confidence from 0 to 1."
        ),
        fields={"act": {"type": "string", "enum": [act.value for act in Act]}, "score": _SCORE},
        tokens_per_item=16,
    ),
    "extract": Task(
        name="extract_facts",
        instructions=(
            "Each stretch below is part of a conversation that has gone quiet, as lines `role: text`. List in "
            "`facts` what is worth remembering about the person in later conversations: their plans, dates, "
            "preferences, people, places, decisions and corrections. Each fact is one sentence that reads alone "
            "(`note`, with names and values, never 'he' or 'it'), and the two things it links (`subject`, "
            "`object`). Give `source`: `user` when the user said or confirmed it, `assistant` when only the "
            "assistant said it, `extracted` when you cannot tell. Where the user changed a value, keep the "
            "latest. Greetings, thanks and passing remarks are not facts: an empty list is a good answer."
        ),
        fields={"facts": {"type": "array", "items": {
            "type": "object",
            "properties": {"note": {"type": "string"}, "subject": {"type": "string"},
                           "object": {"type": "string"},
                           "source": {"type": "string", "enum": ["user", "assistant", "extracted"]}},
            "required": ["note", "subject", "object", "source"],
            "additionalProperties": False}}},
        tokens_per_item=300,
    ),
}


def clip(text: str, limit: int) -> str:
    """Cut long text at a word boundary, marking the cut; the budget per call matters more than the tail."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return f"{cut} […]"


def numbered(label: str, texts: Sequence[str], *, limit: int) -> str:
    return "\n".join(f"{label} {i}: {clip(text, limit)}" for i, text in enumerate(texts))


def mention(entity: EntityMention, *, limit: int) -> str:
    named = repr(entity.name)
    if entity.aliases:
        named += " (also called " + ", ".join(repr(a) for a in entity.aliases) + ")"
    known = [*(f"known as {r!r}" for r in entity.description.roles),
             *(f"tied to {t!r}" for t in entity.description.ties)]
    if known:
        named += " [" + "; ".join(known) + "]"
    return f"{named} ({clip(entity.context, limit)})" if entity.context else named


def claim_text(fact: str | FactClaim, *, limit: int) -> str:
    """A fact as the judge reads it: its sentence, and its entities when the graph knows them."""
    if isinstance(fact, str):
        return clip(fact, limit)
    text = clip(fact.note, limit)
    if fact.subject or fact.object:
        text += f" [subject: {fact.subject}; object: {fact.object}{'; milestone' if fact.milestone else ''}]"
    return text
