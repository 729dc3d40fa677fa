"""What a memory waits on, in words, for the Temporal UI's current details (`workflow.set_current_details`)."""

from __future__ import annotations

from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.lane_types import EventRef
    from workflows.state import LaneState

__all__ = ["describe"]


def _when(at: datetime) -> str:
    return f"{at:%H:%M} UTC on {at:%Y-%m-%d}"


def describe(state: LaneState, running: EventRef | None, *, pending: bool, sleep_at: datetime | None) -> str:
    status = state.status
    lines: list[str] = []
    if status is not None and status.note_ask_since is not None:
        turns = (f"turn {status.note_ask_first_turn}" if status.note_ask_first_turn == status.note_ask_last_turn
                 else f"turns {status.note_ask_first_turn}-{status.note_ask_last_turn}")
        times = "once" if status.note_asks == 1 else f"{status.note_asks} times"
        flag = " (pending)" if pending else ""
        lines.append(f"note for {turns} asked {times} since {_when(status.note_ask_since)}{flag}")
    if status is not None and status.leaving_episodes:
        lines.append(f"{status.leaving_episodes} episode(s) leaving")
    if running is not None:
        lines.append(f"lane: running event {running.seq} ({running.kind}) of {state.known_seq}")
    elif state.known_seq > state.done_seq:
        lines.append(f"lane: events {state.done_seq + 1}-{state.known_seq} waiting")
    else:
        lines.append(f"lane idle after {state.done_seq} events")
    if state.parked:
        lines.append(f"{state.parked} job(s) parked after failing (table lane_parked_jobs)")
    if sleep_at is not None:
        lines.append(f"sleep prepared at {_when(sleep_at)} unless a user message comes first")
    elif status is not None and status.sleep_prepared_for is not None:
        lines.append(f"sleep prepared after the user message of {_when(status.sleep_prepared_for)}")
    return "\n".join(lines)
