"""How the blocks write a fact's date and turns, one format everywhere."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["stamp", "turns_label"]


def turns_label(first_turn: int, last_turn: int) -> str:
    return f"turn {first_turn}" if first_turn == last_turn else f"turns {first_turn}–{last_turn}"


def stamp(at: datetime, first_turn: int, last_turn: int) -> str:
    """`[2026-02-04 16:45 UTC, turns 8–9]`: when a fact was written and the turns it speaks for."""
    return f"[{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC, {turns_label(first_turn, last_turn)}]"
