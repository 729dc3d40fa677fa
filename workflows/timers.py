"""The workflow's deadlines: the 24-hour sleep and a note ask turning pending, on one movable timer.

Deadlines are in the messages' time (a user message's `at` plus 24 hours), so a memory's sleep follows its
conversation, not the moment a job happened to run. The timer is the updatable-timer pattern: the workflow
waits for the nearest deadline or for new work, whichever comes first, and recomputes after each.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.lane_types import MemoryStatus

__all__ = ["WakeTimer", "idle_due", "note_ask_due", "note_ask_pending", "sleep_due"]


def sleep_due(status: MemoryStatus | None, tried_for: datetime | None) -> datetime | None:
    """When the sleep after the last user message should be prepared, or None when nothing is owed."""
    if status is None or status.sleep_due_at is None or status.last_user_message_at is None:
        return None
    last = status.last_user_message_at
    if status.sleep_prepared_for is not None and status.sleep_prepared_for >= last:
        return None
    if tried_for is not None and tried_for >= last:
        return None  # tried and parked: wait for the next user message rather than loop
    return status.sleep_due_at


def idle_due(status: MemoryStatus | None, done_for: datetime | None) -> datetime | None:
    """When the conversation goes quiet (the idle gate), or None when nothing is owed or the gate already ran
    for its last user message (a later reply waits for the next quiet stretch, rather than loop)."""
    if status is None or status.idle_due_at is None or status.last_user_message_at is None:
        return None
    if done_for is not None and done_for >= status.last_user_message_at:
        return None
    return status.idle_due_at


def note_ask_pending(status: MemoryStatus | None, now: datetime) -> bool:
    """An unanswered note ask counts as pending for operators after enough calls or enough minutes."""
    if status is None or status.note_ask_since is None:
        return False
    due = status.note_ask_due_at
    return status.note_ask_over_calls or (due is not None and now >= due)


def note_ask_due(status: MemoryStatus | None, now: datetime) -> datetime | None:
    """When a note ask not yet pending turns pending by time alone."""
    if status is None or status.note_ask_since is None or note_ask_pending(status, now):
        return None
    return status.note_ask_due_at


class WakeTimer:
    """Waits until a deadline that may move, or until `wake()` holds, whichever is first."""

    def __init__(self) -> None:
        self.deadline: datetime | None = None

    def move(self, *deadlines: datetime | None) -> None:
        known = [d for d in deadlines if d is not None]
        self.deadline = min(known) if known else None

    async def wait(self, wake: Callable[[], bool]) -> bool:
        """True when the deadline ended the wait, False when `wake()` did."""
        if self.deadline is None:
            await workflow.wait_condition(wake)
            return False
        delay = (self.deadline - workflow.now()).total_seconds()
        if delay <= 0:
            return True
        try:
            await workflow.wait_condition(wake, timeout=delay)
        except TimeoutError:
            return True
        return False
