"""`MemoryWorkflow`: one per memory, id `memory/{tenant_id}/{memory_id}`.

The gateway signals the newest event number after each commit; the workflow reads the events themselves
from Postgres and runs them through one ordered lane, one job at a time, so no job races the one before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.types import EventRef, FetchEventsInput, MemoryRef, RunEventInput
    from workflows import search_attributes as sa

__all__ = ["EVENTS_SIGNAL", "LaneState", "MemoryWorkflow", "MemoryWorkflowInput", "workflow_id"]

EVENTS_SIGNAL = "events"
ACTIVITY_TIMEOUT = timedelta(seconds=60)
ACTIVITY_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=["InvalidInput", "NotFound"],
)


def workflow_id(tenant_id: str, memory_id: str) -> str:
    return f"memory/{tenant_id}/{memory_id}"


@dataclass
class LaneState:
    """All the workflow carries, small enough to hand to continue-as-new."""

    known_seq: int = 0  # newest event number the gateway has announced
    done_seq: int = 0  # newest event number the lane has finished
    jobs_run: int = 0


@dataclass(frozen=True)
class MemoryWorkflowInput:
    tenant_id: str
    memory_id: str
    state: LaneState = field(default_factory=LaneState)


@workflow.defn
class MemoryWorkflow:
    @workflow.init
    def __init__(self, params: MemoryWorkflowInput) -> None:
        # State comes from the input here, not in `run`: a start signal is handled before `run` begins.
        self.state = params.state
        self.memory = MemoryRef(tenant_id=params.tenant_id, memory_id=params.memory_id)

    @workflow.signal(name=EVENTS_SIGNAL)
    def events(self, newest_seq: int) -> None:
        # Only the newest number matters: a burst of calls collapses into one wake-up, and an old
        # number (a resend after an outage) is simply ignored.
        if newest_seq > self.state.known_seq:
            self.state.known_seq = newest_seq

    @workflow.query
    def lane(self) -> LaneState:
        return self.state

    async def _fetch(self, memory: MemoryRef) -> list[EventRef]:
        return await workflow.execute_activity(
            "fetch_events",
            FetchEventsInput(memory=memory, after_seq=self.state.done_seq),
            result_type=list[EventRef],
            start_to_close_timeout=ACTIVITY_TIMEOUT,
            retry_policy=ACTIVITY_RETRY,
        )

    async def _run_event(self, memory: MemoryRef, event: EventRef) -> None:
        await workflow.execute_activity(
            "record_event",
            RunEventInput(memory=memory, event=event),
            result_type=bool,
            start_to_close_timeout=ACTIVITY_TIMEOUT,
            retry_policy=ACTIVITY_RETRY,
        )

    async def _drain_lane(self, memory: MemoryRef) -> None:
        while self.state.done_seq < self.state.known_seq:
            events = await self._fetch(memory)
            if not events:
                # Announced but absent (the memory was erased): nothing left to run.
                self.state.done_seq = self.state.known_seq
                break
            for event in events:
                await self._run_event(memory, event)
                self.state.done_seq = event.seq
                self.state.jobs_run += 1
                self.state.known_seq = max(self.state.known_seq, event.seq)
        workflow.upsert_search_attributes([sa.LANE_BACKLOG.value_set(self.state.known_seq - self.state.done_seq)])

    @workflow.run
    async def run(self, params: MemoryWorkflowInput) -> None:
        workflow.upsert_search_attributes(
            [sa.TENANT.value_set(params.tenant_id), sa.MEMORY.value_set(params.memory_id)]
        )
        while True:
            await workflow.wait_condition(
                lambda: self.state.known_seq > self.state.done_seq
                or workflow.info().is_continue_as_new_suggested()
            )
            workflow.set_current_details(
                f"running lane events {self.state.done_seq + 1}-{self.state.known_seq}"
            )
            await self._drain_lane(self.memory)
            workflow.set_current_details(f"idle; {self.state.jobs_run} events run")
            if workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(
                    MemoryWorkflowInput(params.tenant_id, params.memory_id, self.state)
                )
