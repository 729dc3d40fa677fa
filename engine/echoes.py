"""Evidence, not echoes: a note entry that only repeats what Lethe itself showed the model (a fact of the facts
block, a line of a recall block) and not what the turns being noted said is no new evidence.

Written as a fact it would merge into the one it repeats and strengthen it with a trace, so recall could feed
itself: a fact recalled, restated, strengthened, recalled again. Such an entry is dropped at report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME
from engine.texts import item_text

__all__ = ["conversation_text", "echoed"]

_WORD = re.compile(r"[\w][\w.%-]*[\w%]|\w")
# Words that say nothing of what a fact is about.
_FILLER = frozenset("""
a an the and or but of to in on at for with by from as is are was were be been being it its this that these
those there here he she they we you i his her their our your not no yes so than then now also
""".split())
# At least this share of an entry's content words must appear in the noted turns for it to count as theirs.
_OWN_WORDS = 0.6


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .;:,!")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _FILLER}


def echoed(note: str, shown: Iterable[str], noted_turns: str) -> bool:
    """Whether `note` stands word for word in one of Lethe's own texts the model was `shown` while too few of its
    words come from the `noted_turns` (the messages of the episodes it was asked about)."""
    said = _normal(note)
    if not said or not any(said in _normal(text) for text in shown):
        return False
    if said in _normal(noted_turns):
        return False  # the turns said it too, word for word
    words = _content_words(note)
    own = _content_words(noted_turns)
    return not words or len(words & own) / len(words) < _OWN_WORDS


def _blocks(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = body.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def conversation_text(bodies: Iterable[Mapping[str, Any]]) -> str:
    """What the turns said, for `echoed`: every message's words, without the model's earlier note calls and
    Lethe's answers to them (writing to memory is not something the conversation said)."""
    bodies = list(bodies)
    notes = {str(call.get("id")) for body in bodies for call in body.get("tool_calls") or []
             if isinstance(call, Mapping) and (call.get("function") or {}).get("name") == NOTE_TOOL_NAME}
    notes |= {str(body.get("call_id")) for body in bodies
              if body.get("type") == "function_call" and body.get("name") == NOTE_TOOL_NAME}
    notes |= {str(block.get("id")) for body in bodies for block in _blocks(body)
              if block.get("type") == "tool_use" and block.get("name") == NOTE_TOOL_NAME}
    lines = []
    for body in bodies:
        if body.get("type") == "function_call" and body.get("name") == NOTE_TOOL_NAME:
            continue
        if str(body.get("tool_call_id") or body.get("call_id")) in notes:
            continue  # a note call's result
        if body.get("tool_calls"):
            body = {**body, "tool_calls": [c for c in body["tool_calls"] if str(c.get("id")) not in notes]}
        if _blocks(body):  # Anthropic: note calls and their results are content blocks
            body = {**body, "content": [b for b in _blocks(body) if str(b.get("id") if b.get("type") == "tool_use"
                                                                       else b.get("tool_use_id")) not in notes]}
        lines.append(item_text(body))
    return "\n".join(lines)
