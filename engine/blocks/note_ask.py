"""The note ask, the `note` tool in both request shapes, and reading a note call's arguments.

`note` takes {"notes": [{"note": str, "subject": str, "object": str, "milestone": bool, "source"?: str,
"kind"?: str, "settles"?: str}]}; a note without `kind` (as every note before kinds) is a plain fact.
One call holds every fact for the leaving turns; one entry with an empty note means nothing was worth keeping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.blocks.dates import turns_label
from engine.facts import KINDS, SOURCES

__all__ = [
    "NOTE_PARAMETERS",
    "NOTE_TOOL_NAME",
    "NoteEntry",
    "NoteReading",
    "note_tool_chat",
    "note_tool_responses",
    "read_note_arguments",
    "render_note_ask",
]

NOTE_TOOL_NAME = "note"
_DESCRIPTION = (
    "Record the facts of conversation turns that are leaving your live context, one knowledge-graph triple "
    "per entry. Call it once, with every fact, when a message asks you to."
)
NOTE_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "notes": {
            "type": "array",
            "description": "Every fact of the leaving turns; one empty note when none is worth keeping.",
            "items": {
                "type": "object",
                "properties": {
                    "note": {"type": "string", "description": "The fact: a sentence that reads alone."},
                    "subject": {"type": "string", "description": "Canonical name of the first entity."},
                    "object": {"type": "string", "description": "Canonical name of the second entity."},
                    "milestone": {
                        "type": "boolean",
                        "description": "True when the fact says where the work stands: agreed, decided, "
                        "done, blocked, next.",
                    },
                    "kind": {
                        "type": "string",
                        "enum": list(KINDS),
                        "description": "What kind of claim it is (the note ask says each in a line); fact "
                        "when none of the others fits.",
                    },
                    "settles": {
                        "type": "string",
                        "description": "When this fact answers an open question noted earlier: that question, "
                        "as it was worded. Leave out otherwise.",
                    },
                    "source": {
                        "type": "string",
                        "enum": ["user", "assistant", "tool"],
                        "description": "Whose word the fact rests on: the user said it, you inferred or "
                        "proposed it, or a tool output showed it. Leave out when unsure.",
                    },
                },
                "required": ["note", "subject", "object", "milestone"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["notes"],
    "additionalProperties": False,
}


def note_tool_chat() -> dict[str, Any]:
    """The `note` tool as a Chat Completions `tools` entry."""
    return {
        "type": "function",
        "function": {
            "name": NOTE_TOOL_NAME,
            "description": _DESCRIPTION,
            "parameters": json_copy(NOTE_PARAMETERS),
        },
    }


def note_tool_responses() -> dict[str, Any]:
    """The `note` tool as a Responses function tool."""
    return {
        "type": "function",
        "name": NOTE_TOOL_NAME,
        "description": _DESCRIPTION,
        "parameters": json_copy(NOTE_PARAMETERS),
    }


def json_copy(value: Any) -> Any:
    # Callers may mutate the request they get back; the module's schema must stay as written.
    return json.loads(json.dumps(value))


_ASK = """\
{turns} of this conversation {verb} leaving your live context. Somewhere in this response, first or last and \
beside any other tool calls you intend, make exactly one call to the note tool with the facts {those}.
Why it matters: this is extractive compression, and no compression keeps more, because what you write stays \
exactly as written. Once those turns leave, their messages and tool outputs leave with them and your facts \
are all that is left. They will be read later, by you and by any assistant that takes this conversation over \
with no other memory of it.
Cut hard but keep whatever carries meaning: decisions and the reasons for them, results, constraints, \
identifiers, figures, who owns what, what is still open.
Next to the facts, mark milestones, the way a project status report would: each milestone reached, each \
point settled with the user (agreed, chosen, approved, turned down, and in which turn), and where the work \
stands against its goal: done, under way, blocked on something, next, replaced. Someone reading cold should \
see what is settled and what remains. A milestone is a triple like any other fact; write none when nothing \
moved.
Copy identifiers, numbers and the conversation's own terms character for character. Put your words into \
information rather than narration, and prefer one exact term (idempotent, blocked-on, ephemeral, orthogonal) \
to a long explanation.
Give each fact its kind, the one that fits best:
- constraint: a rule or limit the work must keep to from now on (must, never, only, at most).
- decision: what was chosen, with the reason when one was given.
- correction: the user showed that something earlier (often your own claim) was wrong; state what is right.
- dead_end: something tried that did not work, and where it stopped paying, so nobody tries it again.
- open_question: something asked or left undecided that nothing has answered yet.
- fact: anything else worth keeping, verified or sourced.
When a fact answers an open question from earlier, put that question, as it was worded, in settles.
Say whose word each fact rests on in its source: "user" when the user said or confirmed it, "assistant" \
when it is your own inference or proposal, "tool" when a tool output showed it; leave source out when you \
cannot tell. A fact the user stated outweighs a later guess, and a user's correction outweighs everything.
Make a single note call whose notes list has one entry for each fact, with milestone set to true on \
milestones. If those turns hold nothing a later assistant would need, send one entry with an empty note.
Shape every fact as a knowledge-graph triple, as in relation extraction: one relation between two entities, \
the note saying it in a sentence that stands on its own, subject and object naming the two entities. \
Recognise the entities and resolve each to its canonical name: the name your earlier facts already use, \
otherwise the most specific name the conversation gives it. Each fact becomes one edge between its subject \
and its object in a knowledge graph.
Example, where the user kept saying "the staging box": note "The staging server db-stage-02 was upgraded to \
Postgres 16." with subject "staging server db-stage-02" and object "Postgres 16"; and, as a milestone, note \
"The user approved the Postgres 16 upgrade plan in turn 7." with subject "user" and object "Postgres 16 \
upgrade plan"."""


def render_note_ask(first_turn: int, last_turn: int) -> str:
    """The message that closes a request while episodes are leaving: which turns, and what a good fact is."""
    label = turns_label(first_turn, last_turn)
    plural = first_turn != last_turn
    return _ASK.format(
        turns=("History from " + label),
        verb="is",
        those="those turns hold" if plural else "that turn holds",
    )


@dataclass(frozen=True)
class NoteEntry:
    """One fact from a note call."""

    note: str
    subject: str
    object: str
    milestone: bool
    source: str = "unknown"
    kind: str = "fact"
    # The open question this fact answers, as the note worded it (None: none).
    settles: str | None = None


@dataclass(frozen=True)
class NoteReading:
    """A note call read: its facts, or why it was not taken. No entries, no error: nothing worth keeping."""

    entries: tuple[NoteEntry, ...] = ()
    error: str | None = None

    @property
    def taken(self) -> bool:
        return self.error is None


def _reject(reason: str) -> NoteReading:
    return NoteReading(error=reason)


def read_note_arguments(arguments: str | Mapping[str, Any]) -> NoteReading:
    """Read a note call's arguments (the JSON string the model sent, or its parsed object)."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            return _reject(f"arguments are not JSON: {exc}")
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        return _reject("arguments must be a JSON object")
    notes = parsed.get("notes")
    if not isinstance(notes, list) or not notes:
        return _reject("`notes` must be a non-empty list")
    entries: list[NoteEntry] = []
    for index, raw in enumerate(notes):
        if not isinstance(raw, Mapping):
            return _reject(f"notes[{index}] must be an object")
        for key in ("note", "subject", "object"):
            if not isinstance(raw.get(key), str):
                return _reject(f"notes[{index}].{key} must be a string")
        milestone = raw.get("milestone", False)
        if not isinstance(milestone, bool):
            return _reject(f"notes[{index}].milestone must be a boolean")
        source = raw.get("source") or "unknown"
        if source not in SOURCES:
            return _reject(f"notes[{index}].source must be one of user, assistant, tool")
        kind = raw.get("kind") or "fact"
        if kind not in KINDS:
            return _reject(f"notes[{index}].kind must be one of {', '.join(KINDS)}")
        settles = raw.get("settles")
        if settles is not None and not isinstance(settles, str):
            return _reject(f"notes[{index}].settles must be a string")
        entries.append(NoteEntry(raw["note"].strip(), raw["subject"].strip(), raw["object"].strip(), milestone,
                                 source, kind, (settles or "").strip() or None))
    if len(entries) == 1 and not entries[0].note:
        return NoteReading()
    for index, entry in enumerate(entries):
        if not entry.note:
            return _reject(f"notes[{index}].note is empty; an empty note must be the only entry")
        if not entry.subject or not entry.object:
            return _reject(f"notes[{index}] needs both a subject and an object")
    return NoteReading(entries=tuple(entries))
