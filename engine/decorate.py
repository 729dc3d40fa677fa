"""One decorate, start to finish: the hot path hands in what the store holds and gets back the plan and the
request the model will see.

In order: acknowledged episodes whose last turn is over seal; if the request would pass the ceiling while a
note ask is unanswered, the leaving episodes seal without facts; a sleep (24 h since the last user message)
or a view over its budget fades to the landing, cutting closed history into episodes first if it is uncut;
the request is assembled.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import accumulate
from typing import Any

from engine.assembly import Block, assemble
from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import note_tool_chat, render_note_ask
from engine.budget import Budget, measure_turns, plan_budget
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores, cut_history, uncut_runs
from engine.episodes import Episode, EpisodeState, Transition, seal
from engine.facts import Fact
from engine.fade import (
    apply_transitions,
    ceiling_passed,
    fade_in_progress,
    plan_fade,
    seal_leaving_without_facts,
    should_sleep,
)
from engine.messages import StoredMessage, instruction_items
from engine.sizing import estimate_tokens
from engine.traces import Trace, encoding_trace, episode_activations, fact_activations
from engine.units import closed_units, current_turn, units_of

__all__ = ["Decoration", "MemoryView", "decorate", "facts_in_block", "in_view_and_recent", "visible_messages"]


@dataclass(frozen=True)
class MemoryView:
    """What the store holds for one memory, loaded for a decorate. Messages are the history in seq order,
    the new ones included; recall blocks are keyed by the turn whose user message they precede."""

    messages: Sequence[StoredMessage]
    episodes: Sequence[Episode] = ()
    facts: Sequence[Fact] = ()
    traces: Sequence[Trace] = ()
    recall_blocks: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Decoration:
    """The outcome of a decorate: the request to send, and every change the store must persist."""

    request: dict[str, Any]
    episodes: tuple[Episode, ...]
    new_episodes: tuple[Episode, ...]
    new_traces: tuple[Trace, ...]
    transitions: tuple[Transition, ...]
    note_ask_turns: tuple[int, int] | None
    slept: bool
    budget: Budget
    # The view (history in view plus facts block) as assembled, and as projected with leaving ones gone.
    view_tokens: int
    projected_view: int


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
    messages: Sequence[StoredMessage], episodes: Sequence[Episode], *, recent: int
) -> list[StoredMessage]:
    """What a decorate needs of a memory's whole history: messages outside sealed or forgotten episodes, plus
    the last `recent` ones (out of view, only recent turns' sizes and times still matter).

    A memory's seqs run 1, 2, 3... without gaps, so each hidden episode is one slice to skip: the cost follows
    the episodes and what is kept, not the length of the history."""
    if not messages:
        return []
    if messages[-1].seq - messages[0].seq != len(messages) - 1:
        raise ValueError("messages must be a memory's whole history from its first message, in seq order")
    base, tail_from = messages[0].seq, max(0, len(messages) - recent)
    kept: list[StoredMessage] = []
    position = 0
    for first, last in sorted((e.first_seq, e.last_seq) for e in episodes if not e.in_view):
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


def _with_recall_sizes(
    messages: Sequence[StoredMessage], recall: Mapping[int, str], count: Callable[[str], int]
) -> list[StoredMessage]:
    # A turn's recall block stands just before its user message and leaves with it, so it counts in its size.
    if not recall:
        return list(messages)
    sized: list[StoredMessage] = []
    for message in messages:
        block = recall.get(message.turn) if message.kind == "user" else None
        sized.append(replace(message, tokens=message.tokens + count(block)) if block else message)
    return sized


def decorate(
    request: Mapping[str, Any],
    memory: MemoryView,
    *,
    now: datetime,
    config: MechanismConfig = MechanismConfig(),  # noqa: B008 - frozen, so one shared default is safe
    boundary_scores: Mapping[int, BoundaryScores] | None = None,
    count_text: Callable[[str], int] = estimate_tokens,
    size_ratio: float | None = None,
    defer_unscored_turn: bool = False,
) -> Decoration:
    """Plan this call's memory and assemble the request. `boundary_scores` are keyed by a unit's first seq
    (a unit without scores is neutral); `size_ratio` is the provider-to-estimate ratio kept for the model.

    With `defer_unscored_turn`, a cut leaves the units of the turn that just closed uncut while they have no
    scores: they are the newest history (never the ones to leave), and the lane scores them after this call,
    so the judge need not run on the call's path."""
    scores = boundary_scores or {}
    messages = _with_recall_sizes(memory.messages, memory.recall_blocks, count_text)
    turn = current_turn(messages)
    units = units_of(messages)
    episodes = list(memory.episodes)
    transitions: list[Transition] = []

    for index, episode in enumerate(episodes):
        if episode.state is EpisodeState.LEAVING and episode.facts_written and episode.last_turn < turn:
            episodes[index] = seal(episode, current_turn=turn)
            transitions.append(Transition(episode.id, EpisodeState.LEAVING, EpisodeState.SEALED, "seal"))

    # What no fade can shrink: instructions, tools and other fields, and the note ask with its tool,
    # reserved always so the budget does not jump when an ask appears.
    skeleton = {k: v for k, v in request.items() if k not in ("messages", "input")}
    skeleton["instructions_items"] = instruction_items(request)
    fixed = (
        count_text(json.dumps(skeleton, ensure_ascii=False, default=str))
        + count_text(render_note_ask(0, max(turn, 1)))
        + count_text(json.dumps(note_tool_chat()))
    )
    ceiling = int(config.ceiling_tokens / size_ratio) if size_ratio else config.ceiling_tokens
    in_turn = sum(m.tokens for m in _current_turn_messages(messages, turn)) if turn > 0 else 0
    measure = measure_turns(units, turn_in_progress=turn, config=config)
    budget = plan_budget(
        fixed=fixed, measure=measure, current_turn_tokens=in_turn, config=config, ceiling=ceiling
    )

    fact_weights = fact_activations([f.id for f in memory.facts], memory.traces, now)
    block_sizes: dict[frozenset[str], int] = {}

    def facts_block_tokens(sealed_ids: frozenset[str]) -> int:
        if sealed_ids not in block_sizes:
            text = render_facts_block(facts_in_block(memory.facts, sealed_ids), fact_weights)
            block_sizes[sealed_ids] = count_text(text) if text else 0
        return block_sizes[sealed_ids]

    # History tokens in view are all tokens less those of hidden episodes: prefix sums make each view one
    # binary search per hidden episode instead of a pass over every message (views are asked for often).
    seqs = [m.seq for m in messages]
    running = list(accumulate((m.tokens for m in messages), initial=0))

    def view_of(current: Sequence[Episode]) -> int:
        hidden = 0
        for e in current:
            if not e.in_view:
                hidden += running[bisect_right(seqs, e.last_seq)] - running[bisect_left(seqs, e.first_seq)]
        return running[-1] - hidden + facts_block_tokens(_sealed(current))

    if fade_in_progress(episodes) and ceiling_passed(fixed + view_of(episodes), ceiling):
        forced = seal_leaving_without_facts(episodes)
        episodes = apply_transitions(episodes, forced)
        transitions += forced

    slept = _sleeps(messages, turn, now, config)
    new_episodes: list[Episode] = []
    new_traces: list[Trace] = []
    projected = view_of(episodes)
    if not fade_in_progress(episodes) and (slept or projected > budget.budget):
        closed = closed_units(units, turn)
        while defer_unscored_turn and closed and closed[-1].turn == turn - 1 and closed[-1].first_seq not in scores:
            closed.pop()
        for run in uncut_runs(closed, episodes):
            cut = cut_history(
                run,
                scores=scores,
                max_tokens=config.episode_max(budget.budget),
                min_units=config.episode_min_units,
            )
            new_episodes += cut
            new_traces += [encoding_trace(e) for e in cut]
        episodes = sorted(episodes + new_episodes, key=lambda e: e.first_seq)
        plan = plan_fade(
            episodes,
            activations=episode_activations(episodes, [*memory.traces, *new_traces], now),
            view_tokens=projected,
            landing=budget.landing,
            current_turn=turn,
            facts_block_tokens=facts_block_tokens,
            reason="sleep" if slept else "fade",
        )
        episodes = apply_transitions(episodes, plan.transitions)
        transitions += plan.transitions
        projected = plan.projected_view
    else:
        projected = view_of([e for e in episodes if e.state is not EpisodeState.LEAVING]) - sum(
            e.tokens for e in episodes if e.state is EpisodeState.LEAVING
        )

    leaving = [e for e in episodes if e.state is EpisodeState.LEAVING]
    ask_turns = (min(e.first_turn for e in leaving), max(e.last_turn for e in leaving)) if leaving else None
    history: list[Mapping[str, Any] | Block] = []
    for message in visible_messages(memory.messages, episodes):
        block = memory.recall_blocks.get(message.turn)
        if block and message.kind == "user":
            history.append(Block(block))
        history.append(message.body)
    sealed_facts = facts_in_block(memory.facts, _sealed(episodes))
    assembled = assemble(
        request,
        history=history,
        facts_block=render_facts_block(sealed_facts, fact_weights),
        note_ask=render_note_ask(*ask_turns) if ask_turns else None,
    )
    return Decoration(
        request=assembled,
        episodes=tuple(episodes),
        new_episodes=tuple(new_episodes),
        new_traces=tuple(new_traces),
        transitions=tuple(transitions),
        note_ask_turns=ask_turns,
        slept=slept,
        budget=budget,
        view_tokens=view_of(episodes),
        projected_view=projected,
    )


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
