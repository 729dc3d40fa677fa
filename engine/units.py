"""Units and turns: the whole pieces history is cut from, so a call never leaves without its output.

A unit is either one user message or one assistant step together with every tool result answering its calls.
A turn starts at each user message and runs to the next one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import accumulate
from typing import Any, Literal, NamedTuple

from engine.messages import Classified, StoredMessage, item_kind

__all__ = [
    "Unit",
    "UnitKind",
    "closed_units",
    "current_turn",
    "number_turns",
    "split_classified",
    "split_units",
    "units_of",
]

UnitKind = Literal["user", "step", "other"]


class Unit(NamedTuple):  # a tuple: a decorate builds hundreds, and frozen dataclasses are slow to build
    """A whole stretch of history: indexes into the messages, their seq range, turn, size and time."""

    start: int
    end: int  # exclusive
    kind: UnitKind
    first_seq: int
    last_seq: int
    turn: int
    tokens: int
    at: datetime


def split_units(items: Sequence[Mapping[str, Any]]) -> list[tuple[int, int, UnitKind]]:
    """Cut history items into units: (start, end, kind) index ranges covering every item in order."""
    return split_classified([Classified.of(item) for item in items])


def split_classified(items: Sequence[Classified]) -> list[tuple[int, int, UnitKind]]:
    """`split_units` over items already classified (stored messages keep theirs)."""
    spans: list[list[Any]] = []  # [start, end, kind, has outputs]
    for index, item in enumerate(items):
        kind = item.kind
        last = spans[-1] if spans else None
        if kind == "output" and last is not None and last[2] == "step":
            last[1] = index + 1
            last[3] = True
        elif kind == "step" and last is not None and last[2] == "step" and not last[3]:
            # Responses emits reasoning, text and calls as separate items of one step, and a reasoning
            # item must keep the item after it; Chat emits one assistant message per step.
            if item.plain_assistant and items[last[1] - 1].plain_assistant:
                spans.append([index, index + 1, "step", False])
            else:
                last[1] = index + 1
        elif kind in ("user", "step"):
            spans.append([index, index + 1, kind, False])
        else:
            spans.append([index, index + 1, "other", False])
    return _merge_split_calls(items, [(s, e, k) for s, e, k, _ in spans])


def _merge_split_calls(
    items: Sequence[Classified], spans: list[tuple[int, int, UnitKind]]
) -> list[tuple[int, int, UnitKind]]:
    # An output that arrives after a later step still belongs with its call: join the units between,
    # but never across a user message, which always opens a turn of its own.
    unit_of_call: dict[str, int] = {}
    merged: list[tuple[int, int, UnitKind]] = []
    for start, end, kind in spans:
        target: int | None = None
        if kind != "user":
            for index in range(start, end):
                call = items[index].answers
                if call is not None and (owner := unit_of_call.get(call)) is not None:
                    # Merging only ever collapses the tail, so an index past the end now means the last unit.
                    owner = min(owner, len(merged) - 1)
                    target = owner if target is None else min(target, owner)
        if target is not None and all(k != "user" for _, _, k in merged[target + 1:]):
            merged[target:] = [(merged[target][0], end, "step")]
        else:
            merged.append((start, end, kind))
        for index in range(start, end):
            for call in items[index].calls:
                unit_of_call[call] = len(merged) - 1
    return merged


def number_turns(items: Sequence[Mapping[str, Any]], *, first_turn: int = 0) -> list[int]:
    """The turn of each item: each user message opens the next turn; earlier items stay in `first_turn`."""
    turns: list[int] = []
    turn = first_turn
    for item in items:
        if item_kind(item) == "user":
            turn += 1
        turns.append(turn)
    return turns


def units_of(messages: Sequence[StoredMessage]) -> list[Unit]:
    """The units of stored history, with their seq range, turn (of their first message) and size."""
    spans = split_classified([m.classified for m in messages])
    running = list(accumulate((m.tokens for m in messages), initial=0))
    return [
        Unit(
            start=start,
            end=end,
            kind=kind,
            first_seq=messages[start].seq,
            last_seq=messages[end - 1].seq,
            turn=messages[start].turn,
            tokens=running[end] - running[start],
            at=messages[end - 1].at,
        )
        for start, end, kind in spans
    ]


def current_turn(messages: Sequence[StoredMessage]) -> int:
    """The turn in progress: the turn of the newest message (0 before any user message)."""
    return messages[-1].turn if messages else 0


def closed_units(units: Sequence[Unit], turn_in_progress: int) -> list[Unit]:
    """Units whose turn precedes `turn_in_progress` (cutting never touches the open turn)."""
    return [u for u in units if u.turn < turn_in_progress]
