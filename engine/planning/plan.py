"""The steps of a decorate: `decide` makes every decision recall's answer is not needed for, `finish` places this
turn's recall block and assembles the request."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from contracts.errors import OverCeiling
from engine.budget import Budget, budget_for
from engine.config import MechanismConfig
from engine.cutting import BoundaryScores, cut_closed
from engine.episodes import Episode, EpisodeState, Transition
from engine.fade import FadePlan, apply_transitions, ceiling_passed, fade_in_progress, plan_fade
from engine.planning.ceiling import seal_acknowledged, seal_if_past_ceiling, seal_picked_past_ceiling
from engine.planning.records import Decided, DecoratePlan, PlanCore, StoredMemory
from engine.planning.turns import assemble_request, block_keys, note_ask_turns, sleeps, turn_user_message
from engine.planning.view import (
    Fixed,
    LetheText,
    ViewSizes,
    fixed_tokens,
    in_view_ids,
    reserved_tokens,
    visible_messages,
)
from engine.recall.asking import asks_about_past
from engine.recall.grouping import Recalled
from engine.recall.placing import Placing, block_budget, earlier_blocks_within
from engine.sizing import estimate_tokens
from engine.texts import message_text
from engine.traces import encoding_trace, episode_activations, fact_activations
from engine.units import Unit, current_turn, units_of

__all__ = ["decide", "finish"]


@dataclass(frozen=True)
class _Setting:
    """What the steps of one `decide` share: the turn, this turn's recall block and room, the budget, the sizes."""

    turn: int
    units: list[Unit]
    recall_seq: int | None
    blocks: dict[int, str]
    room: int
    current: str | None
    current_tokens: int
    fixed: Fixed
    budget: Budget
    sizes: ViewSizes
    lethe_text: LetheText


@dataclass
class _Faded:
    """What a sleep or fade leaves: the episodes, those it cut, its transitions and the projected view."""

    episodes: list[Episode]
    new_episodes: list[Episode]
    transitions: list[Transition]
    projected: int
    slept: bool


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
    turn = current_turn(memory.messages)
    episodes = list(memory.episodes)
    transitions = seal_acknowledged(episodes, turn)
    s = _measure(request, memory, turn, config=config, count_text=count_text, size_ratio=size_ratio,
                 recall_coming=recall_coming, now=now, in_view=in_view_ids(episodes))
    transitions += _seal_while_asked(s, memory, episodes, now, salience=config.salience)
    sleep_due = sleep_owed or sleeps(memory.messages, turn, now, config)
    faded = _sleep_or_fade(s, memory, episodes, now=now, config=config, boundary_scores=boundary_scores,
                           sleep_due=sleep_due)
    ask_turns = note_ask_turns(faded.episodes)
    view_tokens = s.sizes.of(faded.episodes)
    sent, current = _check_ceiling(request, s, ask_turns, view_tokens)
    return Decided(
        request=request, memory=memory, episodes=tuple(faded.episodes), new_episodes=tuple(faded.new_episodes),
        transitions=tuple(transitions + faded.transitions), note_ask_turns=ask_turns, slept=faded.slept,
        sleep_owed=sleep_due and not faded.slept, budget=s.budget, view_tokens=view_tokens,
        projected_view=faded.projected, sent=sent, recall_seq=s.recall_seq, recall_room=s.room, current=current,
        blocks=s.blocks, sizes=s.sizes,
        in_facts_block=block_keys(memory.facts, faded.episodes, weigh_kinds=config.claim_kinds)
        if s.room else frozenset(),
        shown_in_view=_shown_in_view(memory, faded.episodes, s), count=s.lethe_text,
    )


def _measure(request: Mapping[str, Any], memory: StoredMemory, turn: int, *, config: MechanismConfig,
             count_text: Callable[[str], int], size_ratio: float | None, recall_coming: bool,
             now: datetime, in_view: frozenset[str]) -> _Setting:
    """Measure the call: what no fade can shrink, the room kept for recall, the budget and the view's sizes."""
    messages = memory.messages
    # The size ratio is learned on what we estimate as JSON (messages, the agent's tools and instructions); the
    # note ask, its tool, the facts block and recall blocks are Lethe's own text, counted as the provider counts
    # it. In the ceiling's corrected units they weigh 1/ratio when the ratio is below one (never less than their
    # count), so a request carrying them stays within the ceiling by the provider's count, and the ratio learned
    # from such a request is still the history's.
    plain = max(1.0, 1.0 / size_ratio) if size_ratio else 1.0
    lethe_text = LetheText(count_text, plain)
    opened = turn_user_message(messages, turn)
    recall_seq = opened.seq if opened is not None else None
    # Earlier turns' blocks stand in the view; this turn's counts with what no fade can shrink: the room kept for
    # a block still being found, or the block a tool loop's turn already carries.
    earlier = {seq: text for seq, text in memory.recall_blocks.items() if seq != recall_seq}
    # A message that asks about the past has a larger block kept for it.
    room = block_budget(config, asks_about_past=asks_about_past(message_text(opened))) \
        if recall_coming and opened is not None else 0
    current = memory.recall_blocks.get(recall_seq) if recall_seq is not None and not room else None
    current_tokens = lethe_text(current) if current is not None else 0
    fixed = fixed_tokens(request, turn, count_text, plain)
    # The constraints out of view are set aside like the note ask: no fade can take them out of the facts block.
    reserved = reserved_tokens(memory.facts, in_view=in_view, weigh_kinds=config.claim_kinds,
                               count_text=count_text, plain=plain)
    fixed = Fixed(fixed.tokens + current_tokens + reserved, fixed.note_reserve)
    units = units_of(messages)
    budget = budget_for(units, turn=turn, fixed=fixed.tokens + room, config=config, size_ratio=size_ratio)
    # A share of the landing, the least a faded view holds: so a share of any request, not only of a full one.
    blocks = earlier_blocks_within(earlier, lethe_text, int(budget.landing * config.recall_blocks_max_share))
    sizes = ViewSizes(messages, memory.facts, fact_activations([f.id for f in memory.facts], memory.traces, now),
                      count_text, plain, {seq: lethe_text(text) for seq, text in blocks.items()},
                      in_view=in_view, weigh_kinds=config.claim_kinds)
    return _Setting(turn, units, recall_seq, blocks, room, current, current_tokens, fixed, budget, sizes,
                    lethe_text)


def _seal_while_asked(s: _Setting, memory: StoredMemory, episodes: list[Episode], now: datetime, *,
                      salience: bool) -> list[Transition]:
    """Seal at the ceiling while a note ask is unanswered (in place)."""
    # The ceiling is hard and the room is not: past it, the block shrinks (or goes) before any episode seals
    # unasked for it.
    return seal_if_past_ceiling(episodes, s.fixed.tokens, s.sizes, s.budget.ceiling,
                                lambda leaving: episode_activations(leaving, memory.traces, now, salience=salience))


def _sleep_or_fade(s: _Setting, memory: StoredMemory, episodes: list[Episode], *, now: datetime,
                   config: MechanismConfig, boundary_scores: Mapping[int, BoundaryScores] | None,
                   sleep_due: bool) -> _Faded:
    """Sleep or fade to the landing when one is due and no fade is in progress; else project the view."""
    projected = s.sizes.of(episodes)
    if fade_in_progress(episodes) or not (sleep_due or projected > s.budget.budget):
        projected = s.sizes.of([e for e in episodes if e.state is not EpisodeState.LEAVING]) - sum(
            e.tokens for e in episodes if e.state is EpisodeState.LEAVING
        )
        return _Faded(episodes, [], [], projected, slept=False)
    before = list(episodes)
    judged = boundary_scores is not None and not ceiling_passed(s.fixed.tokens + projected, s.budget.ceiling)
    new_episodes, episodes, plan = _cut_and_plan(s, memory, before, projected, now=now, config=config,
                                                 scores=boundary_scores, judged_only=judged, sleep_due=sleep_due)
    if judged and plan.projected_view > s.budget.budget:
        # What the lane has scored cannot take the view under the budget: waiting for the rest, the next call
        # could pass the ceiling, and what leaves then leaves unasked, its facts never written. The cut goes
        # by sizes now, while what it picks can still be asked for (docs/cutting.md).
        new_episodes, episodes, plan = _cut_and_plan(s, memory, before,
                                                     projected, now=now, config=config, scores=boundary_scores,
                                                     judged_only=False, sleep_due=sleep_due)
    episodes = apply_transitions(episodes, plan.transitions)
    transitions = list(plan.transitions)
    # What just started leaving stays in view until its note, but never past the ceiling.
    transitions += seal_picked_past_ceiling(episodes, plan.transitions, s.fixed.tokens, s.sizes, s.budget.ceiling)
    return _Faded(episodes, new_episodes, transitions, plan.projected_view, slept=sleep_due)


def _cut_and_plan(s: _Setting, memory: StoredMemory, before: list[Episode], projected: int, *, now: datetime,
                  config: MechanismConfig, scores: Mapping[int, BoundaryScores] | None, judged_only: bool,
                  sleep_due: bool) -> tuple[list[Episode], list[Episode], FadePlan]:
    """Cut the closed history into episodes and plan the fade to the landing: the cut, all episodes, the plan."""
    cut = cut_closed(s.units, before, turn=s.turn, scores=scores or {},
                     max_tokens=config.episode_max(s.budget.budget), min_units=config.episode_min_units,
                     judged_only=judged_only)
    joined = sorted(before + cut, key=lambda e: e.first_seq)
    return cut, joined, plan_fade(
        joined,
        activations=episode_activations(joined, [*memory.traces, *map(encoding_trace, cut)], now,
                                        salience=config.salience),
        view_tokens=projected, landing=s.budget.landing, current_turn=s.turn,
        facts_block_tokens=s.sizes.facts_block, reason="sleep" if sleep_due else "fade",
    )


def _check_ceiling(request: Mapping[str, Any], s: _Setting, ask_turns: tuple[int, int] | None,
                   view_tokens: int) -> tuple[int, str | None]:
    """Check the ceiling: the request's size as sent without a new recall block, and the tool loop's block kept.

    Raises `OverCeiling` when even without earlier episodes and a recall block the request passes the ceiling."""
    current = s.current
    sent = s.fixed.tokens - (0 if ask_turns else s.fixed.note_reserve) + view_tokens
    if sent > s.budget.ceiling and s.current_tokens:
        # Recall never makes a decorate fail: a tool loop's block goes for this call.
        sent -= s.current_tokens
        current = None
    if sent > s.budget.ceiling:
        field = "messages" if "messages" in request else "input"
        raise OverCeiling(
            f"the request would hold {sent} tokens with every earlier episode gone, over the ceiling of "
            f"{s.budget.ceiling} tokens (the instructions, tools and turn in progress are too large on their own)",
            field=field, ceiling=s.budget.ceiling, tokens=sent,
        )
    return sent, current


def _shown_in_view(memory: StoredMemory, episodes: Sequence[Episode], s: _Setting) -> frozenset[int]:
    """The fact ids an earlier recall block still in view shows: they are not recalled again."""
    # A block that just left the view, or that the view's share for earlier blocks left out, shows nothing.
    visible = {m.seq for m in visible_messages(memory.messages, episodes)} if s.room and memory.recall_shown else set()
    return frozenset(i for seq, ids in memory.recall_shown.items() if seq in visible and seq in s.blocks
                     for i in ids)


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
    memory = decided.memory
    # The core passes on whole: one definition of each field the store reads.
    core = {f.name: getattr(decided, f.name) for f in fields(PlanCore)}
    return DecoratePlan(
        **core,
        request=assemble_request(decided.request, memory.messages, memory.facts, decided.sizes.fact_weights,
                                 decided.episodes, decided.note_ask_turns, blocks,
                                 weigh_kinds=decided.sizes.weigh_kinds),
        new_traces=decided.new_traces, estimated_tokens=sent,
        recall_block=placing.text if placing is not None else None,
        recall_items=placing.items if placing is not None else (), recall_seq=decided.recall_seq,
    )
