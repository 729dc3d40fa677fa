"""`MemoryWorkflow`: one per memory, id `memory/{tenant_id}/{memory_id}`.

The gateway signals the newest event number after each commit; the workflow reads the events themselves
from Postgres and runs their jobs through one ordered lane, one at a time, so no job races the one before it.
It also holds the 24-hour sleep timer and keeps the memory's search attributes current.

Changing this file changes what replays: guard a changed command sequence with `workflow.patched(...)` and
keep the recorded histories in `tests/replay/` passing (docs/operating.md, "Changing workflow code safely").
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from contracts.lane_names import EVENTS_SIGNAL, MEMORY_ERASED, RETRY_SIGNAL, WORKFLOW_TYPE, workflow_id
    from contracts.lane_types import (
        EventRef,
        FetchEventsInput,
        IdleInput,
        JobInput,
        MemoryRef,
        MemoryStatus,
        ParkInput,
        ResolveInput,
        RunEventInput,
        SleepInput,
    )
    from workflows import search_attributes as sa
    from workflows.details import describe
    from workflows.jobs import (
        GRAPH_PATCH,
        INDEX_QUIET_TURNS,
        LANE_RETRY,
        PREPARE_RECALL,
        PREPARE_SLEEP,
        RECALL_AHEAD_PATCH,
        RECALL_PATCH,
        SALIENCE_PATCH,
        USER_IDLE_PATCH,
        Job,
        job_named,
        jobs_for,
    )
    from workflows.state import LaneState, MemoryWorkflowInput
    from workflows.timers import WakeTimer, idle_due, note_ask_due, note_ask_pending, sleep_due

__all__ = ["EVENTS_SIGNAL", "LaneState", "MemoryWorkflow", "MemoryWorkflowInput", "workflow_id"]

# Bookkeeping reads and writes a few rows: a worker that died holding one is noticed quickly.
LANE_TIMEOUT = timedelta(seconds=10)


@workflow.defn(name=WORKFLOW_TYPE)
class MemoryWorkflow:
    @workflow.init
    def __init__(self, params: MemoryWorkflowInput) -> None:
        # State comes from the input here, not in `run`: a start signal is handled before `run` begins.
        self.state = params.state
        self.memory = MemoryRef(tenant_id=params.tenant_id, memory_id=params.memory_id)
        self.timer = WakeTimer()
        self.running: EventRef | None = None
        # Recall ahead: the newest event number its walk was prepared after, and whether one is being prepared.
        self.ahead = False
        self.ahead_seen = 0
        self.ahead_busy = False
        self.stopping = False
        self.ahead_task: asyncio.Task[None] | None = None
        # The idle gate's timer (issue #37): off for histories recorded before it.
        self.idle = False
        # A new memory under this name (its row id, its newest event), once one has signalled.
        self.reborn: tuple[int, int] | None = None

    @workflow.signal(name=EVENTS_SIGNAL)
    def events(self, newest_seq: int, memory_pk: int | None = None) -> None:
        # Only the newest number matters: a burst of calls collapses into one wake-up, and an old
        # number (a resend after an outage) is simply ignored.
        if memory_pk is not None and memory_pk != self.state.memory_pk:
            if self.state.memory_pk is None:
                self.state.memory_pk = memory_pk
            else:
                # The memory was erased while Temporal was away (so this workflow was not ended) and has been
                # created again: its numbers start over. The lane starts over with them, in a new run.
                seen = self.reborn[1] if self.reborn and self.reborn[0] == memory_pk else 0
                self.reborn = (memory_pk, max(seen, newest_seq))
                return
        if newest_seq > self.state.known_seq:
            self.state.known_seq = newest_seq

    @workflow.signal(name=RETRY_SIGNAL)
    def retry_parked(self, seq: int, kind: str, job: str) -> None:
        # Asked twice before it ran, it runs once.
        if (seq, kind, job) not in self.state.retries:
            self.state.retries.append((seq, kind, job))

    @workflow.query
    def lane(self) -> LaneState:
        return self.state

    @workflow.run
    async def run(self, params: MemoryWorkflowInput) -> None:
        workflow.upsert_search_attributes(
            [sa.TENANT.value_set(params.tenant_id), sa.MEMORY.value_set(params.memory_id)]
        )
        self._show()
        # Histories recorded before recall ahead replay without it: the walk then runs in the report's turn.
        self.ahead = workflow.patched(RECALL_AHEAD_PATCH)
        if self.ahead:
            self.ahead_task = asyncio.create_task(self._recall_ahead())
        self.idle = workflow.patched(USER_IDLE_PATCH)
        while True:
            self.timer.move(
                sleep_due(self.state.status, self.state.sleep_tried_for),
                note_ask_due(self.state.status, workflow.now()),
                idle_due(self.state.status, self.state.idle_done_for) if self.idle else None,
            )
            deadline_passed = await self.timer.wait(
                lambda: self._has_work() or bool(self.state.retries) or self._should_continue()
                or self.reborn is not None)
            if self.reborn is not None:
                await self._continue_as_new(params)
            if deadline_passed:
                await self._on_deadline()
            if self._has_work():
                await self._drain_lane()
            if self.state.retries:
                await self._run_retries()
            if self._should_continue():
                await self._continue_as_new(params)

    async def _continue_as_new(self, params: MemoryWorkflowInput) -> None:
        # Handlers finish first so no signal is lost between this run and the next; a walk being prepared ahead
        # finishes too (the next run prepares again for what came meanwhile).
        self.stopping = True
        await workflow.wait_condition(lambda: workflow.all_handlers_finished() and not self.ahead_busy)
        state = self.state
        if self.reborn is not None:
            # Nothing of the erased memory is left to run: the new one's lane begins at its first event.
            pk, newest = self.reborn
            state = LaneState(known_seq=newest, memory_pk=pk)
        workflow.continue_as_new(MemoryWorkflowInput(params.tenant_id, params.memory_id, state))

    async def _recall_ahead(self) -> None:
        """Beside the lane: after each announced event, the walk for the next user message (prepare_recall
        walks the memory's latest turn once its reply is in, and does nothing when it is not or the walk is
        already there)."""
        while True:
            await workflow.wait_condition(lambda: self.stopping or self.state.known_seq > self.ahead_seen)
            if self.stopping:
                return
            self.ahead_seen = self.state.known_seq
            self.ahead_busy = True
            try:
                await self._run_job(PREPARE_RECALL, JobInput(
                    memory=self.memory, event=EventRef(seq=self.ahead_seen, kind="announced")), seq=self.ahead_seen)
            finally:
                self.ahead_busy = False

    def _has_work(self) -> bool:
        return self.state.known_seq > self.state.done_seq

    def _should_continue(self) -> bool:
        return workflow.info().is_continue_as_new_suggested()

    async def _drain_lane(self) -> None:
        while self._has_work():
            events = await workflow.execute_activity(
                "fetch_events", FetchEventsInput(memory=self.memory, after_seq=self.state.done_seq),
                result_type=list[EventRef], start_to_close_timeout=LANE_TIMEOUT, retry_policy=LANE_RETRY,
            )
            if not events:
                # Announced but absent (the memory was erased): nothing left to run.
                self.state.done_seq = self.state.known_seq
                break
            for event in events:
                await self._run_event(event)
                if self._should_continue():
                    return  # the next run picks up from done_seq; the carried state stays small

    async def _run_event(self, event: EventRef) -> None:
        self.running = event
        self._show()
        # Graph jobs joined the lane later: histories recorded before them replay without them.
        # A user's graph's `fed` event and an import's are newer than all of them: no history before holds one.
        graph = event.kind in ("fed", "imported") or (event.kind in ("decorate", "facts_written")
                                                      and workflow.patched(GRAPH_PATCH))
        # So did recall's: the same, under its own patch.
        recall = event.kind in ("decorate", "report") and workflow.patched(RECALL_PATCH)
        # And salience's (the acts of new episodes), after them.
        salience = event.kind in ("decorate", "report") and workflow.patched(SALIENCE_PATCH)
        for job in jobs_for(event.kind, graph=graph, recall=recall, ahead=self.ahead, salience=salience):
            await self._run_job(job, JobInput(memory=self.memory, event=event), seq=event.seq)
        status = await workflow.execute_activity(
            "record_event", RunEventInput(memory=self.memory, event=event),
            result_type=MemoryStatus, start_to_close_timeout=LANE_TIMEOUT, retry_policy=LANE_RETRY,
        )
        self.running = None
        self.state.done_seq = event.seq
        self.state.known_seq = max(self.state.known_seq, event.seq)
        self.state.jobs_run += 1
        self._take(status)

    async def _run_retries(self) -> None:
        """Parked jobs an operator asked for, each once more through the same path: one that fails again is parked
        again (its new error recorded); one that succeeds is marked resolved."""
        while self.state.retries:
            seq, kind, name = self.state.retries[0]
            job = job_named(name)
            if job is not None:
                done = await self._run_job(job, JobInput(memory=self.memory, event=EventRef(seq=seq, kind=kind)),
                                           seq=seq, retried=True)
                if done is not None:
                    self._take(await workflow.execute_activity(
                        "resolve_parked", ResolveInput(memory=self.memory, seq=seq, job=name),
                        result_type=MemoryStatus, start_to_close_timeout=LANE_TIMEOUT, retry_policy=LANE_RETRY))
            self.state.retries.pop(0)

    async def _run_job(self, job: Job, argument: JobInput | SleepInput | IdleInput, *, seq: int,
                       retried: bool = False) -> MemoryStatus | int | None:
        """Run one job; one that keeps failing is parked (recorded, shown) and the lane moves on."""
        try:
            result = await workflow.execute_activity(
                job.activity, argument, result_type=MemoryStatus if job is PREPARE_SLEEP else int,
                start_to_close_timeout=job.start_to_close, heartbeat_timeout=job.heartbeat,
                retry_policy=job.retry,
            )
        except ActivityError as err:
            if isinstance(err.cause, ApplicationError) and err.cause.type == MEMORY_ERASED:
                return None  # nothing to park: the memory, its parked jobs included, is gone
            reason = str(err.cause or err)
            workflow.logger.warning("lane job parked", extra={"job": job.activity, "seq": seq})
            status = await workflow.execute_activity(
                "park_job", ParkInput(memory=self.memory, seq=seq, job=job.activity, error=reason),
                result_type=MemoryStatus, start_to_close_timeout=LANE_TIMEOUT, retry_policy=LANE_RETRY,
            )
            if not retried:
                self.state.parked += 1
            self._take(status)
            return None
        if retried:
            return result if isinstance(result, MemoryStatus) else int(result or 0)
        return result if isinstance(result, MemoryStatus) else None

    async def _on_deadline(self) -> None:
        status = self.state.status
        due = sleep_due(status, self.state.sleep_tried_for)
        if status is not None and due is not None and workflow.now() >= due:
            at = status.last_user_message_at
            assert at is not None  # sleep_due returns a deadline only with a user message
            self.state.sleep_tried_for = at
            workflow.set_current_details(f"preparing the sleep owed since {due:%Y-%m-%d %H:%M} UTC")
            prepared = await self._run_job(PREPARE_SLEEP, SleepInput(memory=self.memory, for_user_message_at=at),
                                           seq=self.state.done_seq)
            if isinstance(prepared, MemoryStatus):
                self._take(prepared)
        if self.idle:
            await self._on_quiet()
        self._show()  # a note ask may have turned pending by time alone

    async def _on_quiet(self) -> None:
        """The idle gate: the quiet conversation's new turns go to its user's graph, once per user message (a
        parked gate is not retried in a loop; the next quiet stretch hands them over with its own)."""
        status = self.state.status
        due = idle_due(status, self.state.idle_done_for)
        if status is None or due is None or workflow.now() < due:
            return
        at = status.last_user_message_at
        assert at is not None  # idle_due returns a deadline only with a user message
        self.state.idle_done_for = at
        workflow.set_current_details(f"quiet since {at:%Y-%m-%d %H:%M} UTC: handing its turns to the user's graph")
        await self._run_job(INDEX_QUIET_TURNS, IdleInput(memory=self.memory, for_user_message_at=at),
                            seq=self.state.done_seq)

    def _take(self, status: MemoryStatus) -> None:
        self.state.status = status
        self._show()

    def _show(self) -> None:
        """Search attributes and current details from the last status; only changed attributes are upserted."""
        status, now = self.state.status, workflow.now()
        backlog = max(self.state.known_seq - self.state.done_seq, status.backlog if status else 0)
        pending = note_ask_pending(status, now)
        wanted = [
            sa.NOTE_ASK_PENDING.value_set(pending),
            sa.LEAVING_EPISODES.value_set(status.leaving_episodes if status else 0),
            sa.LANE_BACKLOG.value_set(backlog),
        ]
        since = status.note_ask_since if status and pending else None
        wanted.append(sa.NOTE_ASK_SINCE.value_set(since) if since else sa.NOTE_ASK_SINCE.value_unset())
        last_user = status.last_user_message_at if status else None
        if last_user is not None:
            wanted.append(sa.LAST_USER_MESSAGE_AT.value_set(last_user))
        current = workflow.info().typed_search_attributes
        changed = [u for u in wanted if current.get(u.key) != getattr(u, "value", None)]
        if changed:
            workflow.upsert_search_attributes(changed)
        workflow.set_current_details(describe(self.state, self.running, pending=pending,
                                              sleep_at=sleep_due(status, self.state.sleep_tried_for)))
