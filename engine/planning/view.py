"""View sizing: which messages are in view, and what the view and the fixed part of a request weigh."""

from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import note_tool_chat, render_note_ask
from engine.claims import in_front, reserved_facts
from engine.episodes import Episode, EpisodeState
from engine.facts import Fact
from engine.messages import StoredMessage, instruction_items

__all__ = [
    "Fixed", "LetheText", "ViewSizes", "facts_in_block", "fixed_tokens", "in_view_and_recent", "in_view_ids",
    "reserved_tokens", "sealed_ids", "visible_messages",
]


def visible_messages(messages: Sequence[StoredMessage], episodes: Sequence[Episode]) -> list[StoredMessage]:
    """History in view: every message not inside a sealed or forgotten episode (`messages` in seq order)."""
    hidden = sorted((e.first_seq, e.last_seq) for e in episodes if not e.in_view)
    if not hidden:
        return list(messages)
    # Episodes never overlap and messages are in seq order: each hidden episode is one slice to skip.
    seqs = [m.seq for m in messages]
    visible: list[StoredMessage] = []
    position = 0
    for first, last in hidden:
        lo = bisect_left(seqs, first, position)
        hi = bisect_right(seqs, last, lo)
        visible += messages[position:lo]
        position = hi
    visible += messages[position:]
    return visible


def in_view_and_recent(
    messages: Sequence[StoredMessage], hidden: Sequence[tuple[int, int]], *, recent: int
) -> list[StoredMessage]:
    """What a decorate needs of a memory's whole history: messages outside the `hidden` spans
    (`engine.episodes.hidden_spans`), plus the last `recent` ones (out of view, only recent turns' sizes and
    times still matter).

    A memory's seqs run 1, 2, 3... without gaps, so each hidden span is one slice to skip: the cost follows
    the spans and what is kept, not the length of the history."""
    if not messages:
        return []
    if messages[-1].seq - messages[0].seq != len(messages) - 1:
        raise ValueError("messages must be a memory's whole history from its first message, in seq order")
    base, tail_from = messages[0].seq, max(0, len(messages) - recent)
    kept: list[StoredMessage] = []
    position = 0
    for first, last in hidden:
        lo, hi = max(first - base, position), min(last - base + 1, tail_from)
        if lo >= hi:
            continue
        kept += messages[position:lo]
        position = hi
    kept += messages[position:]
    return kept


def facts_in_block(facts: Sequence[Fact], sealed_ids: frozenset[str], in_view: frozenset[str] = frozenset(),
                   *, weigh_kinds: bool = False) -> list[Fact]:
    """Facts block contents: facts written against at least one sealed episode and, with kinds weighed,
    constraints none of whose episodes is `in_view` (`engine.claims.in_front`)."""
    return [f for f in facts if in_front(f, sealed=sealed_ids, in_view=in_view, weigh_kinds=weigh_kinds)]


def in_view_ids(episodes: Sequence[Episode]) -> frozenset[str]:
    """The ids of the episodes whose messages are in view (live or leaving)."""
    return frozenset(e.id for e in episodes if e.state in (EpisodeState.LIVE, EpisodeState.LEAVING))


def sealed_ids(episodes: Sequence[Episode]) -> frozenset[str]:
    """The ids of the sealed episodes: the facts block shows their facts."""
    return frozenset(e.id for e in episodes if e.state is EpisodeState.SEALED)


@dataclass(frozen=True)
class LetheText:
    """Counts Lethe's own text (note ask, facts block, recall blocks) in the ceiling's corrected units: weighed
    `plain` (1/size ratio when the ratio is below one), so a request carrying it stays within the ceiling by the
    provider's count."""

    count_text: Callable[[str], int]
    plain: float = 1.0

    def __call__(self, text: str) -> int:
        return math.ceil(self.count_text(text) * self.plain)


class ViewSizes:
    """Sizes of the view (history in view plus facts block) for any set of episode states, asked for often:
    prefix sums make each one a binary search per hidden episode, not a pass over every message.

    With kinds weighed, the constraints out of view (`in_view`: the episodes in view when the call was measured)
    are in every facts block and their room is set aside with what no fade can shrink (`reserved`), so the
    facts block counts here only for what it holds beyond them."""

    def __init__(self, messages: Sequence[StoredMessage], facts: Sequence[Fact], fact_weights: Mapping[str, float],
                 count_text: Callable[[str], int], plain: float = 1.0,
                 blocks: Mapping[int, int] | None = None, *, in_view: frozenset[str] = frozenset(),
                 weigh_kinds: bool = False) -> None:
        self.facts, self.fact_weights, self.count_text, self.plain = facts, fact_weights, count_text, plain
        self.in_view, self.weigh_kinds = in_view, weigh_kinds
        self.reserved = reserved_tokens(facts, in_view=in_view, weigh_kinds=weigh_kinds, count_text=count_text,
                                        plain=plain)
        self.seqs = [m.seq for m in messages]
        # An earlier turn's recall block counts with the user message it stands before, and leaves with it.
        extra = blocks or {}
        self.running = list(accumulate((m.tokens + extra.get(m.seq, 0) for m in messages), initial=0))
        self._blocks: dict[frozenset[str], int] = {}

    def facts_block(self, sealed_ids: frozenset[str]) -> int:
        """Tokens of the facts block shown when the episodes `sealed_ids` names are sealed (cached)."""
        if sealed_ids not in self._blocks:
            text = render_facts_block(
                facts_in_block(self.facts, sealed_ids, self.in_view, weigh_kinds=self.weigh_kinds),
                self.fact_weights, weigh_kinds=self.weigh_kinds)
            whole = math.ceil(self.count_text(text) * self.plain) if text else 0
            self._blocks[sealed_ids] = max(0, whole - self.reserved)
        return self._blocks[sealed_ids]

    def of(self, episodes: Sequence[Episode]) -> int:
        """Tokens of the view with `episodes` in these states."""
        seqs, running = self.seqs, self.running
        hidden = sum(running[bisect_right(seqs, e.last_seq)] - running[bisect_left(seqs, e.first_seq)]
                     for e in episodes if not e.in_view)
        return self.running[-1] - hidden + self.facts_block(sealed_ids(episodes))


def reserved_tokens(facts: Sequence[Fact], *, in_view: frozenset[str], weigh_kinds: bool,
                    count_text: Callable[[str], int], plain: float = 1.0) -> int:
    """The room set aside for the constraints out of view: the facts block they make on their own."""
    text = render_facts_block(reserved_facts(facts, in_view=in_view, weigh_kinds=weigh_kinds), {},
                              weigh_kinds=weigh_kinds)
    return math.ceil(count_text(text) * plain) if text else 0


@dataclass(frozen=True)
class Fixed:
    """What no fade can shrink, and the part of it that is the note ask with its tool (reserved always, so the
    budget does not jump when an ask appears, but sent only when there is one)."""

    tokens: int
    note_reserve: int


def fixed_tokens(request: Mapping[str, Any], turn: int, count_text: Callable[[str], int],
                 plain: float = 1.0) -> Fixed:
    """What no fade can shrink of `request`: everything but its history, and the note ask's reserve."""
    skeleton = {k: v for k, v in request.items() if k not in ("messages", "input")}
    skeleton["instructions_items"] = instruction_items(request)
    # An ask can name no later turn than this one, nor a number with more digits: never under the ask sent.
    last = max(turn, 1)
    reserve = math.ceil((count_text(render_note_ask(last, last + 1)) + count_text(json.dumps(note_tool_chat())))
                        * plain)
    return Fixed(count_text(json.dumps(skeleton, ensure_ascii=False, default=str)) + reserve, reserve)
