"""Facts: what the model wrote about episodes as they left, one knowledge-graph triple each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

__all__ = ["KINDS", "SOURCES", "Fact"]

# Whose words a fact rests on: the user's own, the assistant's inference, a tool's output, or not said.
SOURCES = ("user", "assistant", "tool", "unknown")

# What kind of claim a fact is (engine.claims); `fact` when the note did not say, as in notes written before kinds.
KINDS = ("constraint", "decision", "correction", "dead_end", "open_question", "fact")


@dataclass(frozen=True)
class Fact:
    """One fact in force: a sentence that reads on its own, with its subject and object entities."""

    id: str
    note: str
    subject: str
    object: str
    milestone: bool
    # The episodes it was written against: one note call covers every episode awaiting it.
    episode_ids: tuple[str, ...]
    # When it was written, and the turns it speaks for; the blocks date facts with both.
    at: datetime
    first_turn: int
    last_turn: int
    # Who said it (user, assistant, tool, unknown), and the fact it stands in unsettled conflict with.
    source: str = "unknown"
    conflict_with: str | None = None
    kind: str = "fact"
    # An open question's answer, once a later fact settled it (None: still open).
    settled_by: str | None = None
    # A correction: the episodes of the claims it corrected, whose messages may still be in view.
    corrects_episodes: tuple[str, ...] = ()
