"""Recall's numbers, in one place: the gateway's find and the lane's walk and distill read them all from here.

The walk's rules (which levels are kept, which lead on, how far and how wide) belong to the mechanism
(`engine.config.MechanismConfig`, read from the `LETHE_RECALL_*` settings with the rest of it); this holds the
mechanism whole and asks it for them, so a find and the lane's walk can never use different rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.config import MechanismConfig
from engine.recall.floor import ScoreFloor
from engine.recall.walk import WalkRules

__all__ = ["DISTILL_CONVERSATION_CHARS", "MESSAGE_DIALOGUE_CHARS", "MESSAGE_DIALOGUE_ITEMS", "RecallConfig",
           "TURN_DIALOGUE_CHARS"]

# Two dialogues of different lengths, for two readers. The message's recent conversation, searched with a new
# user message in the hot path: only to set the message in its context, and every character of it is embedded
# (and read by the inline walk's judge) while the agent waits.
MESSAGE_DIALOGUE_ITEMS = 6
MESSAGE_DIALOGUE_CHARS = 600
# What the lane's judge reads of a turn when it prepares the next message's walk: the start of its messages
# (the user message and the reply come first). No one waits on the lane, so the turn is read more fully.
TURN_DIALOGUE_CHARS = 1200
# What distill reads: the turn a block served and the first message after it.
DISTILL_CONVERSATION_CHARS = 4000


@dataclass(frozen=True)
class RecallConfig:
    """Every knob of recall, with the defaults the gateway and the lane start from."""

    mechanism: MechanismConfig = field(default_factory=MechanismConfig)
    # The whole of a find, from its first read to its last (`LETHE_RECALL_INLINE_DEADLINE_MS`).
    deadline_seconds: float = 0.15
    # The text search configuration of Postgres the searches by words use (`LETHE_SEARCH_LANGUAGE`).
    language: str = "simple"
    # Failing the deadline: this many of the fused hits, facts and passages, as they are.
    hits: int = 6
    passage_hits: int = 2
    # With a walk prepared: facts one step across the best hits' entities, nearest the message...
    bridges: int = 3
    # ...and this many of the message's best hits come before what the prepared walk kept.
    hits_first: int = 3
    # What of those hits, unrated by the walk, may enter a block (`LETHE_RECALL_SCORE_FLOOR`,
    # `LETHE_RECALL_TOUCH_SIMILARITY`).
    floor: ScoreFloor = field(default_factory=ScoreFloor)
    # Of the deadline, the share kept back for fetching what a cut-short find had found (a lookup by ids): on
    # a loaded machine a fetch can take tens of milliseconds, and a fetch cut short loses everything found.
    fetch_share: float = 1 / 3
    message_dialogue_items: int = MESSAGE_DIALOGUE_ITEMS
    message_dialogue_chars: int = MESSAGE_DIALOGUE_CHARS
    turn_dialogue_chars: int = TURN_DIALOGUE_CHARS
    distill_conversation_chars: int = DISTILL_CONVERSATION_CHARS

    def walk_rules(self) -> WalkRules:
        """The mechanism's walk rules (`MechanismConfig.walk_rules`)."""
        return self.mechanism.walk_rules()
