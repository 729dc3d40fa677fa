"""Passages: a sealed episode's messages cut into pieces that search can find and recall can quote.

Whole messages are joined while they fit; a message too long for one passage is windowed with an overlap,
so a sentence cut at one window's edge is whole in the next. Tool outputs are messages like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


def cut_passages(
    messages: Sequence[StoredMessage], *, size: int = PASSAGE_CHARS, overlap: int = PASSAGE_OVERLAP
) -> list[PassageText]:
    """The episode's messages, in order, as passages of at most `size` characters."""
    if not 0 <= overlap < size:
        raise ValueError("overlap must be at least 0 and less than size")
    out: list[PassageText] = []
    group: list[tuple[StoredMessage, str]] = []

    def flush() -> None:
        if group:
            first, last = group[0][0], group[-1][0]
            out.append(PassageText(len(out), first.seq, last.seq, first.turn, last.turn,
                                   "\n".join(text for _, text in group)))
            group.clear()

    for message in messages:
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
