"""How the blocks write a fact's date and turns, one format everywhere."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["ELSEWHERE", "stamp", "turns_label"]


def turns_label(first_turn: int, last_turn: int) -> str:
    return f"turn {first_turn}" if first_turn == last_turn else f"turns {first_turn}–{last_turn}"


# What stands for the turns of a record from another of the user's conversations: its turns are not this one's.
ELSEWHERE = "another conversation"


def stamp(at: datetime, first_turn: int, last_turn: int, *, elsewhere: bool = False) -> str:
    """`[2026-02-04 16:45 UTC, turns 8–9]`: when a fact was written and the turns it speaks for; a record of
    another conversation says so in place of turns it does not share with this one."""
    where = ELSEWHERE if elsewhere else turns_label(first_turn, last_turn)
    return f"[{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC, {where}]"
