"""One decorate, start to finish: the hot path hands in what the store holds and gets back the plan and the
request the model will see.

In order: acknowledged episodes whose last turn is over seal; if the request would pass the ceiling while a
note ask is unanswered, the leaving episodes seal without facts; a sleep (24 h since the last user message,
or one owed since a fade was in progress) or a view over its budget fades to the landing, cutting the closed
history the lane has judged into episodes first; the request is assembled and checked against the ceiling.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate
from typing import Any

from contracts.errors import OverCeiling
from engine.assembly import Block, assemble
from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import note_tool_chat, render_note_ask
from engine.budget import Budget, budget_for
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores, cut_closed
from engine.episodes import Episode, EpisodeState, Transition, seal
from engine.facts import Fact
from engine.fade import (
    FadePlan,
    apply_transitions,
    ceiling_passed,
    fade_in_progress,
    plan_fade,
    seal_leaving_without_facts,
    should_sleep,
)
from engine.messages import StoredMessage, instruction_items
from engine.recall.grouping import Recalled
from engine.recall.placing import Placing, block_budget
from engine.sizing import estimate_tokens
from engine.traces import Trace, encoding_trace, episode_activations, fact_activations
from engine.units import current_turn, units_of

__all__ = [
    "DecoratePlan", "Decided", "StoredMemory", "decide", "decorate", "facts_in_block", "finish",
    "in_view_and_recent", "visible_messages",
]


@dataclass(frozen=True)
class StoredMemory:
    """What the store holds for one memory, loaded for a decorate. Messages are the history in seq order,
    the new ones included."""

    messages: Sequence[StoredMessage]
    episodes: Sequence[Episode] = ()
    facts: Sequence[Fact] = ()
    traces: Sequence[Trace] = ()
    # Recall blocks as the history carries them, by the seq of the user message each stands before (distilled
    # text once distilled; a removed one is absent). They leave the view with their user message's episode.
    recall_blocks: Mapping[int, str] = field(default_factory=dict)
    # The fact ids each of those blocks holds: a fact in a block still in view is not recalled again.
    recall_shown: Mapping[int, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class DecoratePlan:
    """The outcome of a decorate: the request to send, and every change the store must persist."""

    request: dict[str, Any]
    episodes: tuple[Episode, ...]
    new_episodes: tuple[Episode, ...]
    new_traces: tuple[Trace, ...]
    transitions: tuple[Transition, ...]
    note_ask_turns: tuple[int, int] | None
    # True only when this call's sleep faded the view; a sleep that met a fade in progress is owed instead.
    slept: bool
    sleep_owed: bool
    budget: Budget
    # The view (history in view plus facts block) as assembled, and as projected with leaving ones gone.
    view_tokens: int
    projected_view: int
    # Our count of the request as sent (the note ask and its tool only when asked), for the size ratio.
    estimated_tokens: int
    # This turn's recall block as placed (None: none), the items it holds, and the user message it stands before.
    recall_block: str | None = None
    recall_items: tuple[Recalled, ...] = ()
    recall_seq: int | None = None


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


def facts_in_block(facts: Sequence[Fact], sealed_ids: frozenset[str]) -> list[Fact]:
    """Facts block contents: facts written against at least one sealed episode."""
    return [f for f in facts if sealed_ids.intersection(f.episode_ids)]


def _sealed(episodes: Sequence[Episode]) -> frozenset[str]:
    return frozenset(e.id for e in episodes if e.state is EpisodeState.SEALED)


class _ViewSizes:
    """Sizes of the view (history in view plus facts block) for any set of episode states, asked for often:
    prefix sums make each one a binary search per hidden episode, not a pass over every message."""

    def __init__(self, messages: Sequence[StoredMessage], facts: Sequence[Fact], fact_weights: Mapping[str, float],
                 count_text: Callable[[str], int], plain: float = 1.0,
                 blocks: Mapping[int, int] | None = None) -> None:
        self.facts, self.fact_weights, self.count_text, self.plain = facts, fact_weights, count_text, plain
        self.seqs = [m.seq for m in messages]
        # An earlier turn's recall block counts with the user message it stands before, and leaves with it.
        extra = blocks or {}
        self.running = list(accumulate((m.tokens + extra.get(m.seq, 0) for m in messages), initial=0))
        self._blocks: dict[frozenset[str], int] = {}

    def facts_block(self, sealed_ids: frozenset[str]) -> int:
        if sealed_ids not in self._blocks:
            text = render_facts_block(facts_in_block(self.facts, sealed_ids), self.fact_weights)
            self._blocks[sealed_ids] = math.ceil(self.count_text(text) * self.plain) if text else 0
        return self._blocks[sealed_ids]

    def of(self, episodes: Sequence[Episode]) -> int:
        seqs, running = self.seqs, self.running
        hidden = sum(running[bisect_right(seqs, e.last_seq)] - running[bisect_left(seqs, e.first_seq)]
                     for e in episodes if not e.in_view)
        return self.running[-1] - hidden + self.facts_block(_sealed(episodes))


@dataclass(frozen=True)
class _Fixed:
    """What no fade can shrink, and the part of it that is the note ask with its tool (reserved always, so the
    budget does not jump when an ask appears, but sent only when there is one)."""

    tokens: int
    note_reserve: int


def _fixed(request: Mapping[str, Any], turn: int, count_text: Callable[[str], int], plain: float = 1.0) -> _Fixed:
    skeleton = {k: v for k, v in request.items() if k not in ("messages", "input")}
    skeleton["instructions_items"] = instruction_items(request)
    # An ask can name no later turn than this one, nor a number with more digits: never under the ask sent.
    last = max(turn, 1)
    reserve = math.ceil((count_text(render_note_ask(last, last + 1)) + count_text(json.dumps(note_tool_chat())))
                        * plain)
    return _Fixed(count_text(json.dumps(skeleton, ensure_ascii=False, default=str)) + reserve, reserve)


def _seal_picked_past_ceiling(episodes: list[Episode], picked: Sequence[Transition], fixed: int,
                              sizes: _ViewSizes, ceiling: int) -> list[Transition]:
    """When the episodes a fade just picked would hold the request past the ceiling (a long history arriving in
    one call), the fewest of them seal without facts, least active first, so the rest can still be asked."""
    forced: list[Transition] = []
    for transition in picked:
        if not ceiling_passed(fixed + sizes.of(episodes), ceiling):
            break
        if transition.after is EpisodeState.LEAVING:
            forced.append(Transition(transition.episode_id, EpisodeState.LEAVING, EpisodeState.SEALED, "ceiling"))
            episodes[:] = apply_transitions(episodes, forced[-1:])
    return forced


def _seal_acknowledged(episodes: list[Episode], turn: int) -> list[Transition]:
    """Leaving episodes whose facts are written seal once their last turn is over (in place)."""
    transitions = []
    for index, episode in enumerate(episodes):
        if episode.state is EpisodeState.LEAVING and episode.facts_written and episode.last_turn < turn:
            episodes[index] = seal(episode, current_turn=turn)
            transitions.append(Transition(episode.id, EpisodeState.LEAVING, EpisodeState.SEALED, "seal"))
    return transitions


def _seal_if_past_ceiling(episodes: list[Episode], fixed: int, sizes: _ViewSizes, ceiling: int,
                          activations: Mapping[str, float]) -> list[Transition]:
    """Leaving episodes that would carry the request past the ceiling seal without their facts: the fewest of
    them, least active first, so the note ask goes on for the rest (one ignored ask costs as little as it can)."""
    if not (fade_in_progress(episodes) and ceiling_passed(fixed + sizes.of(episodes), ceiling)):
        return []
    awaiting = sorted((e for e in episodes if e.state is EpisodeState.LEAVING and not e.facts_written),
                      key=lambda e: (activations.get(e.id, 0.0), e.first_seq))
    forced: list[Transition] = []
    for episode in awaiting:
        if not ceiling_passed(fixed + sizes.of(episodes), ceiling):
            break
        forced.append(Transition(episode.id, EpisodeState.LEAVING, EpisodeState.SEALED, "ceiling"))
        episodes[:] = apply_transitions(episodes, forced[-1:])
    if ceiling_passed(fixed + sizes.of(episodes), ceiling):  # written facts still waiting for their turn to end
        rest = list(seal_leaving_without_facts(episodes))
        episodes[:] = apply_transitions(episodes, rest)
        forced += rest
    return forced


@dataclass(frozen=True)
class Decided:
    """A decorate's decisions, made before recall's answer is needed: what the store must persist (the cut, the
    transitions, the note ask, the sleep), and what `finish` needs to place this turn's recall block in the room
    kept for it and assemble the request. The names the store reads are `DecoratePlan`'s."""

    request: Mapping[str, Any]
    memory: StoredMemory
    episodes: tuple[Episode, ...]
    new_episodes: tuple[Episode, ...]
    transitions: tuple[Transition, ...]
    note_ask_turns: tuple[int, int] | None
    slept: bool
    sleep_owed: bool
    budget: Budget
    view_tokens: int
    projected_view: int
    # The request as sent without a new recall block (a tool loop's stored block counted).
    sent: int
    recall_seq: int | None
    # The room kept for a new user message's block (0: none is coming), or a tool loop's stored block.
    recall_room: int
    current: str | None
    blocks: Mapping[int, str]
    sizes: _ViewSizes
    in_facts_block: frozenset[str]
    shown_in_view: frozenset[int]
    count: Callable[[str], int]

    @property
    def new_traces(self) -> tuple[Trace, ...]:
        return tuple(encoding_trace(e) for e in self.new_episodes)


def decorate(
    request: Mapping[str, Any],
    memory: StoredMemory,
    *,
    now: datetime,
    config: MechanismConfig = MechanismConfig(),  # noqa: B008 - frozen, so one shared default is safe
    boundary_scores: Mapping[int, BoundaryScores] | None = None,
    count_text: Callable[[str], int] = estimate_tokens,
    size_ratio: float | None = None,
    sleep_owed: bool = False,
    recall: Sequence[Recalled] | None = None,
) -> DecoratePlan:
    """Plan this call's memory and assemble the request: `decide`, then `finish` with what recall found.

    `recall` is what recall found for a new user message, ranked best first (None: recall was not asked)."""
    return finish(decide(request, memory, now=now, config=config, boundary_scores=boundary_scores,
                         count_text=count_text, size_ratio=size_ratio, sleep_owed=sleep_owed,
                         recall_coming=recall is not None), recall)


def decide(
    request: Mapping[str, Any],
    memory: StoredMemory,
    *,
    now: datetime,
    config: MechanismConfig = MechanismConfig(),  # noqa: B008 - frozen, so one shared default is safe
    boundary_scores: Mapping[int, BoundaryScores] | None = None,
    count_text: Callable[[str], int] = estimate_tokens,
    size_ratio: float | None = None,
    sleep_owed: bool = False,
    recall_coming: bool = False,
) -> Decided:
    """Plan this call's memory: everything but this turn's recall block, which may still be being found.

    `boundary_scores` are the lane's, keyed by a unit's first seq: a cut goes only as far as they reach
    (docs/cutting.md), except when the request would otherwise pass the ceiling; None means no judge at all
    (sizes alone decide). `size_ratio` is the provider-to-estimate ratio for the model. `sleep_owed` is a
    sleep that came while a fade was in progress: it happens as soon as that fade ends. `recall_coming`: recall
    is looking for this new user message's block, and the block's budget is kept for it in what no fade can
    shrink, so the view's budget does not depend on what recall brings (nor on when it brings it).
    Raises `OverCeiling` when the turn in progress and what no fade can shrink pass the ceiling on their own.
    """
    messages = memory.messages
    turn = current_turn(messages)
    units = units_of(messages)
    episodes = list(memory.episodes)
    transitions = _seal_acknowledged(episodes, turn)
    # The size ratio is learned on what we estimate as JSON (messages, the agent's tools and instructions); the
    # note ask, its tool, the facts block and recall blocks are Lethe's own text, counted as the provider counts
    # it. In the ceiling's corrected units they weigh 1/ratio when the ratio is below one (never less than their
    # count), so a request carrying them stays within the ceiling by the provider's count, and the ratio learned
    # from such a request is still the history's.
    plain = max(1.0, 1.0 / size_ratio) if size_ratio else 1.0

    def lethe_text(text: str) -> int:
        return math.ceil(count_text(text) * plain)

    recall_seq = _turn_user_seq(messages, turn)
    # Earlier turns' blocks stand in the view; this turn's counts with what no fade can shrink: the room kept for
    # a block still being found, or the block a tool loop's turn already carries.
    blocks = {seq: text for seq, text in memory.recall_blocks.items() if seq != recall_seq}
    room = block_budget(config) if recall_coming and recall_seq is not None else 0
    current = memory.recall_blocks.get(recall_seq) if recall_seq is not None and not room else None
    current_tokens = lethe_text(current) if current is not None else 0
    fixed = _fixed(request, turn, count_text, plain)
    fixed = _Fixed(fixed.tokens + current_tokens, fixed.note_reserve)
    budget = budget_for(units, turn=turn, fixed=fixed.tokens + room, config=config, size_ratio=size_ratio)
    sizes = _ViewSizes(messages, memory.facts, fact_activations([f.id for f in memory.facts], memory.traces, now),
                       count_text, plain, {seq: lethe_text(text) for seq, text in blocks.items()})
    # The ceiling is hard and the room is not: past it, the block shrinks (or goes) before any episode seals
    # unasked for it.
    transitions += _seal_if_past_ceiling(episodes, fixed.tokens, sizes, budget.ceiling,
                                         episode_activations(episodes, memory.traces, now))

    sleep_due = sleep_owed or _sleeps(messages, turn, now, config)
    slept = False
    new_episodes: list[Episode] = []
    projected = sizes.of(episodes)
    if not fade_in_progress(episodes) and (sleep_due or projected > budget.budget):
        before = list(episodes)

        def cut_and_plan(judged_only: bool) -> tuple[list[Episode], list[Episode], FadePlan]:
            cut = cut_closed(units, before, turn=turn, scores=boundary_scores or {},
                             max_tokens=config.episode_max(budget.budget), min_units=config.episode_min_units,
                             judged_only=judged_only)
            joined = sorted(before + cut, key=lambda e: e.first_seq)
            return cut, joined, plan_fade(
                joined,
                activations=episode_activations(joined, [*memory.traces, *map(encoding_trace, cut)], now),
                view_tokens=projected, landing=budget.landing, current_turn=turn,
                facts_block_tokens=sizes.facts_block, reason="sleep" if sleep_due else "fade",
            )

        judged = boundary_scores is not None and not ceiling_passed(fixed.tokens + projected, budget.ceiling)
        new_episodes, episodes, plan = cut_and_plan(judged)
        if judged and plan.projected_view > budget.budget:
            # What the lane has scored cannot take the view under the budget: waiting for the rest, the next call
            # could pass the ceiling, and what leaves then leaves unasked, its facts never written. The cut goes
            # by sizes now, while what it picks can still be asked for (docs/cutting.md).
            new_episodes, episodes, plan = cut_and_plan(False)
        episodes = apply_transitions(episodes, plan.transitions)
        transitions += plan.transitions
        projected = plan.projected_view
        slept = sleep_due
        # What just started leaving stays in view until its note, but never past the ceiling.
        transitions += _seal_picked_past_ceiling(episodes, plan.transitions, fixed.tokens, sizes, budget.ceiling)
    else:
        projected = sizes.of([e for e in episodes if e.state is not EpisodeState.LEAVING]) - sum(
            e.tokens for e in episodes if e.state is EpisodeState.LEAVING
        )

    ask_turns = _note_ask_turns(episodes)
    view_tokens = sizes.of(episodes)
    sent = fixed.tokens - (0 if ask_turns else fixed.note_reserve) + view_tokens
    if sent > budget.ceiling and current_tokens:
        # Recall never makes a decorate fail: a tool loop's block goes for this call.
        sent -= current_tokens
        current = None
    if sent > budget.ceiling:
        field = "messages" if "messages" in request else "input"
        raise OverCeiling(
            f"the request would hold {sent} tokens with every earlier episode gone, over the ceiling of "
            f"{budget.ceiling} tokens (the instructions, tools and turn in progress are too large on their own)",
            field=field, ceiling=budget.ceiling, tokens=sent,
        )
    # A fact an earlier block in view shows is not recalled again (a block that just left the view no longer
    # shows it).
    visible = {m.seq for m in visible_messages(messages, episodes)} if room and memory.recall_shown else set()
    shown = frozenset(i for seq, ids in memory.recall_shown.items() if seq in visible and seq != recall_seq
                      for i in ids)
    return Decided(
        request=request, memory=memory, episodes=tuple(episodes), new_episodes=tuple(new_episodes),
        transitions=tuple(transitions), note_ask_turns=ask_turns, slept=slept, sleep_owed=sleep_due and not slept,
        budget=budget, view_tokens=view_tokens, projected_view=projected, sent=sent, recall_seq=recall_seq,
        recall_room=room, current=current, blocks=blocks, sizes=sizes,
        in_facts_block=_block_keys(memory.facts, episodes) if room else frozenset(), shown_in_view=shown,
        count=lethe_text,
    )


def finish(decided: Decided, recall: Sequence[Recalled] | None = None) -> DecoratePlan:
    """The request, with this turn's recall block (facts the facts block or an earlier block in view shows left
    out) in the room kept for it, trimmed to what the ceiling leaves: recall never makes a decorate fail."""
    current, sent = decided.current, decided.sent
    placing: Placing | None = None
    room = min(decided.recall_room, decided.budget.ceiling - sent)
    if recall is not None and room > 0:
        placing = Placing(recall, in_view=decided.shown_in_view, budget=room, count_text=decided.count)
        placing.place(decided.in_facts_block)
        current = placing.text
        sent += placing.tokens
    blocks = dict(decided.blocks)
    if current is not None and decided.recall_seq is not None:
        blocks[decided.recall_seq] = current
    return DecoratePlan(
        request=_assemble(decided.request, decided.memory, decided.episodes, decided.sizes,
                          decided.note_ask_turns, blocks),
        episodes=decided.episodes, new_episodes=decided.new_episodes, new_traces=decided.new_traces,
        transitions=decided.transitions, note_ask_turns=decided.note_ask_turns, slept=decided.slept,
        sleep_owed=decided.sleep_owed, budget=decided.budget, view_tokens=decided.view_tokens,
        projected_view=decided.projected_view, estimated_tokens=sent,
        recall_block=placing.text if placing is not None else None,
        recall_items=placing.items if placing is not None else (), recall_seq=decided.recall_seq,
    )


def _block_keys(facts: Sequence[Fact], episodes: Sequence[Episode]) -> frozenset[str]:
    return frozenset(f.id for f in facts_in_block(facts, _sealed(episodes)))


def _note_ask_turns(episodes: Sequence[Episode]) -> tuple[int, int] | None:
    leaving = [e for e in episodes if e.state is EpisodeState.LEAVING]
    return (min(e.first_turn for e in leaving), max(e.last_turn for e in leaving)) if leaving else None


def _assemble(request: Mapping[str, Any], memory: StoredMemory, episodes: Sequence[Episode], sizes: _ViewSizes,
              ask_turns: tuple[int, int] | None, blocks: Mapping[int, str]) -> dict[str, Any]:
    history: list[Mapping[str, Any] | Block] = []
    for message in visible_messages(memory.messages, episodes):
        if message.seq in blocks:
            history.append(Block(blocks[message.seq]))
        history.append(message.body)
    return assemble(
        request,
        history=history,
        facts_block=render_facts_block(facts_in_block(memory.facts, _sealed(episodes)), sizes.fact_weights),
        note_ask=render_note_ask(*ask_turns) if ask_turns else None,
    )


def _turn_user_seq(messages: Sequence[StoredMessage], turn: int) -> int | None:
    """The seq of the user message that opened the turn in progress: its recall block stands before it."""
    for message in _current_turn_messages(messages, turn):
        if message.kind == "user":
            return message.seq
    return None


def _current_turn_messages(messages: Sequence[StoredMessage], turn: int) -> Sequence[StoredMessage]:
    # Turns only grow along the history: the current one is a tail, found from the end.
    start = len(messages)
    while start > 0 and messages[start - 1].turn == turn:
        start -= 1
    return messages[start:]


def _sleeps(messages: Sequence[StoredMessage], turn: int, now: datetime, config: MechanismConfig) -> bool:
    # Only the first call of a new turn sleeps: once the assistant has acted in it, the gap is accounted for.
    in_turn = _current_turn_messages(messages, turn)
    if turn == 0 or any(m.kind != "user" for m in in_turn):
        return False
    earlier = next((m for m in reversed(messages[:len(messages) - len(in_turn)]) if m.kind == "user"), None)
    return should_sleep(earlier.at if earlier else None, now, sleep_after=config.sleep_after)
