"""Passages: a sealed episode's messages cut into pieces that search can find and recall can quote.

Whole messages are joined while they fit; a message too long for one passage is windowed with an overlap,
so a sentence cut at one window's edge is whole in the next. Tool outputs are messages like any other.
The note calls and their answers are left out: they restate the leaving turns in the model's words, and a fact
the graph has since retired would come back through them, quoted as if it were still the record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.blocks.note_ask import NOTE_TOOL_NAME
from engine.messages import StoredMessage
from engine.texts import message_text

__all__ = ["PASSAGE_CHARS", "PASSAGE_OVERLAP", "PassageText", "cut_passages"]

# About 250 tokens: within the embedder's 256-token window, so every word of a passage counts for its meaning.
PASSAGE_CHARS = 1000
PASSAGE_OVERLAP = 200


@dataclass(frozen=True)
class PassageText:
    ordinal: int
    first_seq: int
    last_seq: int
    first_turn: int
    last_turn: int
    text: str


def _windows(text: str, size: int, overlap: int) -> list[str]:
    out, start, step = [], 0, size - overlap
    while True:
        end = min(len(text), start + size)
        if end < len(text):
            # End at a space when one is near, so words are not cut in half.
            space = text.rfind(" ", start + step, end)
            end = space if space > start else end
        out.append(text[start:end].strip())
        if end >= len(text):
            return out
        start = max(end - overlap, start + 1)


def _note_call_ids(messages: Sequence[StoredMessage]) -> set[str]:
    ids: set[str] = set()
    for message in messages:
        body = message.body
        for call in body.get("tool_calls") or []:  # Chat Completions
            if isinstance(call, Mapping) and (call.get("function") or {}).get("name") == NOTE_TOOL_NAME:
                ids.add(str(call.get("id")))
        if body.get("type") == "function_call" and body.get("name") == NOTE_TOOL_NAME:  # Responses
            ids.add(str(body.get("call_id")))
        for part in body.get("content") if isinstance(body.get("content"), list) else []:  # Messages
            if isinstance(part, Mapping) and part.get("type") == "tool_use" and part.get("name") == NOTE_TOOL_NAME:
                ids.add(str(part.get("id")))
    return ids


def _without_notes(message: StoredMessage, ids: set[str]) -> StoredMessage | None:
    """The message without its note calls and their answers; None when nothing else is left."""
    body: dict[str, Any] = dict(message.body)
    if str(body.get("tool_call_id", body.get("call_id"))) in ids and (
            body.get("role") == "tool" or body.get("type") in ("function_call", "function_call_output")):
        return None
    if isinstance(body.get("tool_calls"), list):
        body["tool_calls"] = [c for c in body["tool_calls"] if not (isinstance(c, Mapping) and str(c.get("id")) in ids)]
        if not body["tool_calls"]:
            del body["tool_calls"]
            if not body.get("content"):
                return None
    if isinstance(body.get("content"), list):
        kept = [p for p in body["content"] if not (isinstance(p, Mapping) and (
            (p.get("type") == "tool_use" and str(p.get("id")) in ids)
            or (p.get("type") == "tool_result" and str(p.get("tool_use_id")) in ids)))]
        if not kept and body["content"]:
            return None
        body["content"] = kept
    return replace(message, body=body) if body != message.body else message


def cut_passages(
    messages: Sequence[StoredMessage], *, size: int = PASSAGE_CHARS, overlap: int = PASSAGE_OVERLAP
) -> list[PassageText]:
    """The episode's messages, in order, as passages of at most `size` characters."""
    if not 0 <= overlap < size:
        raise ValueError("overlap must be at least 0 and less than size")
    out: list[PassageText] = []
    group: list[tuple[StoredMessage, str]] = []
    notes = _note_call_ids(messages)

    def flush() -> None:
        if group:
            first, last = group[0][0], group[-1][0]
            out.append(PassageText(len(out), first.seq, last.seq, first.turn, last.turn,
                                   "\n".join(text for _, text in group)))
            group.clear()

    for said in messages:
        message = _without_notes(said, notes) if notes else said
        if message is None:
            continue
        text = message_text(message)
        if len(text) > size:
            flush()
            for window in _windows(text, size, overlap):
                out.append(PassageText(len(out), message.seq, message.seq, message.turn, message.turn, window))
            continue
        if group and sum(len(t) + 1 for _, t in group) + len(text) > size:
            flush()
        group.append((message, text))
    flush()
    return out
