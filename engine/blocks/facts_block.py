"""The facts block: what sealed episodes left behind, in place of their messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.blocks.dates import stamp
from engine.claims import kind_rank
from engine.facts import Fact

__all__ = ["render_facts_block"]

_HEADER = (
    "Facts kept from parts of this conversation that are no longer shown, the most relevant first, "
    "each followed by the entities it links in brackets. The turns they came from are out of view."
)
_OPEN = "Open questions (nothing has settled them yet):"
_MILESTONES = "Milestones (where the work stands):"

# How each kind reads in front of its line; a plain fact carries no label.
_LABELS = {"constraint": "constraint, still binding", "decision": "decision", "correction": "correction",
           "dead_end": "dead end, do not retry", "open_question": "question"}

_WHO = {"user": "the user said so", "assistant": "the assistant inferred it", "tool": "a tool showed it",
        "unknown": "source unknown"}


def _line(fact: Fact) -> str:
    label = _LABELS.get(fact.kind)
    if fact.kind == "open_question" and fact.settled_by is not None:
        label = "question, since settled"
    line = f"- {f'({label}) ' if label else ''}{fact.note} [{fact.subject}, {fact.object}]"
    if fact.conflict_with is not None:
        # Both sides of an unsettled conflict are shown, dated and attributed, until the user settles it.
        line += f" (unsettled, conflicts with another fact here; {_WHO.get(fact.source, _WHO['unknown'])}, " \
                f"{stamp(fact.at, fact.first_turn, fact.last_turn)})"
    return line


def render_facts_block(facts: Sequence[Fact], activations: Mapping[str, float], *,
                       weigh_kinds: bool = False) -> str | None:
    """Most active first (newest first among equals; with kinds weighed, constraints and corrections before other
    facts of the same activation), open questions and milestones in lists of their own; None when empty."""
    kept = [f for f in facts if f.note.strip()]
    if not kept:
        return None
    ordered = sorted(kept, key=lambda f: (-activations.get(f.id, 0.0), kind_rank(f) if weigh_kinds else 0,
                                          -f.at.timestamp(), f.id))
    open_questions = [f for f in ordered if f.kind == "open_question" and f.settled_by is None]
    rest = [f for f in ordered if not (f.kind == "open_question" and f.settled_by is None)]
    lines = [_HEADER, *(_line(f) for f in rest if not f.milestone)]
    if open_questions:
        lines += [_OPEN, *(_line(f) for f in open_questions)]
    milestones = [_line(f) for f in rest if f.milestone]
    if milestones:
        lines += [_MILESTONES, *milestones]
    return "\n".join(lines)
