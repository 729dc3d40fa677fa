"""What the memory workflow carries from run to run (continue-as-new): counters and the last status.

Defined outside the workflow's module, which the sandbox imports afresh for every workflow it starts: here the
classes are one per process, so the converter's cached validator for them serves every memory's workflow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.lane_types import MemoryStatus

__all__ = ["LaneState", "MemoryWorkflowInput"]


@dataclass
class LaneState:
    """All the workflow carries, small enough to hand to continue-as-new: counters and the last status."""

    known_seq: int = 0  # newest event number the gateway has announced
    done_seq: int = 0  # newest event number the lane has finished
    jobs_run: int = 0
    parked: int = 0
    status: MemoryStatus | None = None
    # The user message whose sleep the lane last tried to prepare (so a parked one is not retried in a loop).
    sleep_tried_for: datetime | None = None
    # The user message whose quiet stretch the idle gate last ran for (issue #37).
    idle_done_for: datetime | None = None
    # Parked jobs an operator asked to run again, in the order asked: (seq, event kind, job).
    retries: list[tuple[int, str, str]] = field(default_factory=list)
    # The row id of the memory these events belong to, from the first signal that names it: a memory erased and
    # created again under the same name has a new one, and its event numbers start over.
    memory_pk: int | None = None


@dataclass(frozen=True)
class MemoryWorkflowInput:
    tenant_id: str
    memory_id: str
    state: LaneState = field(default_factory=LaneState)
