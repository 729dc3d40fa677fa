"""What a decorate reads of the turn in progress and the episodes, and the request it assembles from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.assembly import Block, assemble
from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import render_note_ask
from engine.config import MechanismConfig
from engine.episodes import Episode, EpisodeState
from engine.facts import Fact
from engine.fade import should_sleep
from engine.messages import StoredMessage
from engine.planning.view import facts_in_block, in_view_ids, sealed_ids, visible_messages

__all__ = ["assemble_request", "block_keys", "note_ask_turns", "sleeps", "turn_user_message"]


def block_keys(facts: Sequence[Fact], episodes: Sequence[Episode], *, weigh_kinds: bool = False) -> frozenset[str]:
    """The ids of the facts the facts block shows with `episodes` in these states."""
    return frozenset(f.id for f in facts_in_block(facts, sealed_ids(episodes), in_view_ids(episodes),
                                                  weigh_kinds=weigh_kinds))


def note_ask_turns(episodes: Sequence[Episode]) -> tuple[int, int] | None:
    """The turns the note ask names: those of the leaving episodes (None: nothing is leaving)."""
    leaving = [e for e in episodes if e.state is EpisodeState.LEAVING]
    return (min(e.first_turn for e in leaving), max(e.last_turn for e in leaving)) if leaving else None


def assemble_request(request: Mapping[str, Any], messages: Sequence[StoredMessage], facts: Sequence[Fact],
                     fact_weights: Mapping[str, float], episodes: Sequence[Episode],
                     ask_turns: tuple[int, int] | None, blocks: Mapping[int, str], *,
                     weigh_kinds: bool = False) -> dict[str, Any]:
    """The request as sent: the history in view with its recall blocks, the facts block and the note ask."""
    history: list[Mapping[str, Any] | Block] = []
    for message in visible_messages(messages, episodes):
        if message.seq in blocks:
            history.append(Block(blocks[message.seq]))
        history.append(message.body)
    return assemble(
        request,
        history=history,
        facts_block=render_facts_block(
            facts_in_block(facts, sealed_ids(episodes), in_view_ids(episodes), weigh_kinds=weigh_kinds),
            fact_weights, weigh_kinds=weigh_kinds),
        note_ask=render_note_ask(*ask_turns) if ask_turns else None,
    )


def turn_user_message(messages: Sequence[StoredMessage], turn: int) -> StoredMessage | None:
    """The user message that opened the turn in progress: its recall block stands before it."""
    for message in _current_turn_messages(messages, turn):
        if message.kind == "user":
            return message
    return None


def _current_turn_messages(messages: Sequence[StoredMessage], turn: int) -> Sequence[StoredMessage]:
    # Turns only grow along the history: the current one is a tail, found from the end.
    start = len(messages)
    while start > 0 and messages[start - 1].turn == turn:
        start -= 1
    return messages[start:]


def sleeps(messages: Sequence[StoredMessage], turn: int, now: datetime, config: MechanismConfig) -> bool:
    """Whether this call sleeps: the first call of a turn, long enough after the last user message."""
    # Only the first call of a new turn sleeps: once the assistant has acted in it, the gap is accounted for.
    in_turn = _current_turn_messages(messages, turn)
    if turn == 0 or any(m.kind != "user" for m in in_turn):
        return False
    earlier = next((m for m in reversed(messages[:len(messages) - len(in_turn)]) if m.kind == "user"), None)
    return should_sleep(earlier.at if earlier else None, now, sleep_after=config.sleep_after)
