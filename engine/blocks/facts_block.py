"""The facts block: what sealed episodes left behind, in place of their messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.blocks.dates import stamp
from engine.facts import Fact

__all__ = ["render_facts_block"]

_HEADER = (
    "Facts kept from parts of this conversation that are no longer shown, the most relevant first, "
    "each followed by the entities it links in brackets. The turns they came from are out of view."
)
_MILESTONES = "Milestones (where the work stands):"


_WHO = {"user": "the user said so", "assistant": "the assistant inferred it", "tool": "a tool showed it",
        "unknown": "source unknown"}


def _line(fact: Fact) -> str:
    line = f"- {fact.note} [{fact.subject}, {fact.object}]"
    if fact.conflict_with is not None:
        # Both sides of an unsettled conflict are shown, dated and attributed, until the user settles it.
        line += f" (unsettled, conflicts with another fact here; {_WHO.get(fact.source, _WHO['unknown'])}, " \
                f"{stamp(fact.at, fact.first_turn, fact.last_turn)})"
    return line


def render_facts_block(facts: Sequence[Fact], activations: Mapping[str, float]) -> str | None:
    """Most active first (newest first among equals), milestones in their own list; None when empty."""
    kept = [f for f in facts if f.note.strip()]
    if not kept:
        return None
    ordered = sorted(kept, key=lambda f: (-activations.get(f.id, 0.0), -f.at.timestamp(), f.id))
    plain = [_line(f) for f in ordered if not f.milestone]
    milestones = [_line(f) for f in ordered if f.milestone]
    lines = [_HEADER, *plain]
    if milestones:
        lines += [_MILESTONES, *milestones]
    return "\n".join(lines)
