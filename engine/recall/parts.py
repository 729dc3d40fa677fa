"""A message split into its parts, so a question tacked onto a long correction is searched on its own."""

from __future__ import annotations

import re

__all__ = ["MIN_PART_CHARS", "WINDOW_WORDS", "split_parts"]

# A part shorter than this ("Thanks.", "OK, and") says too little to search by: it joins the next one.
MIN_PART_CHARS = 40
# A part longer than this many words is windowed, half a window apart, so each window is one search's worth.
WINDOW_WORDS = 60

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _windows(words: list[str], size: int) -> list[str]:
    if len(words) <= size:
        return [" ".join(words)]
    step = max(1, size // 2)
    out = []
    for start in range(0, len(words), step):
        out.append(" ".join(words[start:start + size]))
        if start + size >= len(words):
            break
    return out


def split_parts(text: str, *, min_chars: int = MIN_PART_CHARS, window: int = WINDOW_WORDS) -> list[str]:
    """Sentences and lines of `text`, short ones joined to the next, long ones windowed, each once; every word of the
    text is in at least one part, and no part is longer than `window` words."""
    pieces = [s.strip() for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]
    joined: list[str] = []
    pending = ""
    for piece in pieces:
        pending = f"{pending} {piece}".strip()
        if len(pending) >= min_chars:
            joined.append(pending)
            pending = ""
    if pending:
        # A short tail belongs with the part before it, when the two still fit one window.
        if joined and len(joined[-1].split()) + len(pending.split()) <= window:
            joined[-1] = f"{joined[-1]} {pending}"
        else:
            joined.append(pending)
    # A sentence said again (a boilerplate line) is one part: searching it twice finds nothing new.
    return list(dict.fromkeys(w for part in joined for w in _windows(part.split(), window)))
