"""The lane's activities: read the memory's next events, run their jobs, record them, and report the memory's
status back to the workflow. Each is idempotent by its ids, so a retry or a worker killed mid-job is harmless.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.fact_traces import score_fact_traces
from activities.heartbeat import heartbeating
from activities.history import cut_uncut, score_units
from activities.salience import judge_episode_salience
from activities.tracing import job_span
from contracts.errors import IllegalTransition, InvalidInput, NotFound
from contracts.lane_types import (
    EventRef,
    FetchEventsInput,
    JobInput,
    MemoryStatus,
    ParkInput,
    ResolveInput,
    RunEventInput,
    SleepInput,
)
from engine.config import MechanismConfig
from providers.judge import Judge
from store.db import Database
from store.repositories import idle, lane, outbox

__all__ = ["LaneActivities", "NoteAskPolicy"]

# Cut after a reply once the uncut closed history holds this many episode maxima: enough that the cut has
# real choices, little enough that a fade rarely has to cut inline.
CUT_AFTER_EPISODE_MAXIMA = 2.0


@dataclass(frozen=True)
class NoteAskPolicy:
    """When an unanswered note ask counts as pending for operators: after this many calls or minutes."""

    calls: int = 3
    minutes: float = 30.0


@contextmanager
def _bad_data_is_final() -> Iterator[None]:
    # Retrying cannot fix bad data; the workflow parks the job instead of burning attempts.
    try:
        yield
    except (InvalidInput, IllegalTransition, ValueError) as exc:
        raise ApplicationError(str(exc), type="BadData", non_retryable=True) from exc


class LaneActivities:
    """Registered bound: the worker owns the database pool and the judge; activities stay tiny."""

    def __init__(
        self, db: Database, *, judge: Judge, config: MechanismConfig = MechanismConfig(),  # noqa: B008 - frozen
        note_ask: NoteAskPolicy = NoteAskPolicy(),  # noqa: B008 - frozen
    ) -> None:
        self.db = db
        self.judge = judge
        self.config = config
        self.note_ask = note_ask

    def all(self) -> list[object]:
        """Every activity of the lane, bound, for the worker."""
        return [self.fetch_events, self.record_event, self.park_job, self.resolve_parked, self.score_boundaries,
                self.cut_history, self.score_traces, self.prepare_sleep, self.judge_salience]

    @activity.defn
    async def fetch_events(self, params: FetchEventsInput) -> list[EventRef]:
        memory = params.memory
        async with self.db.session() as session:
            pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            if pk is None:
                return []
            rows = await lane.events_after(
                session, tenant_id=memory.tenant_id, memory_pk=pk, after_seq=params.after_seq, limit=params.limit
            )
        return [EventRef(seq=seq, kind=kind, traceparent=trace) for seq, kind, trace in rows]

    @activity.defn
    async def record_event(self, params: RunEventInput) -> MemoryStatus:
        """Mark the event processed (its jobs are done) and report the memory's status."""
        memory = params.memory
        async with self.db.session() as session, session.begin():
            changed = await outbox.mark_processed(
                session, tenant_id=memory.tenant_id, memory_id=memory.memory_id, seq=params.event.seq,
                at=datetime.now(UTC),
            )
        activity.logger.info("lane event processed", extra={
            "memory_id": memory.memory_id, "seq": params.event.seq, "kind": params.event.kind, "first_time": changed})
        return await self.status(memory.tenant_id, memory.memory_id)

    @activity.defn
    async def park_job(self, params: ParkInput) -> MemoryStatus:
        memory = params.memory
        async with self.db.session() as session, session.begin():
            pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            if pk is not None:
                await lane.park_job(session, tenant_id=memory.tenant_id, memory_pk=pk, seq=params.seq,
                                    job=params.job, error=params.error)
        activity.logger.warning("lane job parked", extra={
            "memory_id": memory.memory_id, "seq": params.seq, "job": params.job})
        return await self.status(memory.tenant_id, memory.memory_id)

    @activity.defn
    async def resolve_parked(self, params: ResolveInput) -> MemoryStatus:
        """A parked job an operator retried has succeeded: its row is marked resolved."""
        memory = params.memory
        async with self.db.session() as session, session.begin():
            pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            if pk is not None:
                await lane.resolve_parked(session, tenant_id=memory.tenant_id, memory_pk=pk, seq=params.seq,
                                          job=params.job, at=datetime.now(UTC))
        activity.logger.info("parked lane job resolved", extra={
            "memory_id": memory.memory_id, "seq": params.seq, "job": params.job})
        return await self.status(memory.tenant_id, memory.memory_id)

    @activity.defn
    @heartbeating
    async def score_boundaries(self, params: JobInput) -> int:
        memory, event = params.memory, params.event
        with job_span("score_boundaries", memory.tenant_id, event), _bad_data_is_final():
            return await score_units(self.db, self.judge, tenant_id=memory.tenant_id, memory_id=memory.memory_id)

    @activity.defn
    async def cut_history(self, params: JobInput) -> int:
        memory, event = params.memory, params.event
        with job_span("cut_history", memory.tenant_id, event), _bad_data_is_final():
            try:
                cut = await cut_uncut(self.db, self.config, tenant_id=memory.tenant_id, memory_id=memory.memory_id,
                                      min_episode_maxima=CUT_AFTER_EPISODE_MAXIMA)
            except NotFound:
                return 0  # erased meanwhile: nothing to cut
            return cut.episodes

    @activity.defn
    @heartbeating
    async def score_traces(self, params: JobInput) -> int:
        memory, event = params.memory, params.event
        with job_span("score_traces", memory.tenant_id, event), _bad_data_is_final():
            async with self.db.session() as session:
                pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
                payload = {} if pk is None else await lane.event_payload(
                    session, tenant_id=memory.tenant_id, memory_pk=pk, seq=event.seq)
            keys = payload.get("fact_keys") or []
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise InvalidInput(f"event {event.seq}: fact_keys must be a list of strings", field="fact_keys")
            return await score_fact_traces(self.db, self.judge, tenant_id=memory.tenant_id,
                                           memory_id=memory.memory_id, fact_keys=keys)

    @activity.defn
    @heartbeating
    async def judge_salience(self, params: JobInput) -> int:
        """Acts, intensity and salience of the episodes not judged yet; nothing with salience off (every
        encoding then counts 1, so there is nothing to judge for)."""
        memory, event = params.memory, params.event
        if not self.config.salience:
            return 0
        with job_span("judge_salience", memory.tenant_id, event), _bad_data_is_final():
            try:
                return await judge_episode_salience(self.db, self.judge, tenant_id=memory.tenant_id,
                                                    memory_id=memory.memory_id)
            except NotFound:
                return 0  # erased meanwhile: nothing to judge

    @activity.defn
    @heartbeating
    async def prepare_sleep(self, params: SleepInput) -> MemoryStatus:
        """Score and cut the closed history, so the sleep at the next user message only has to pick what fades;
        the turn in progress stays whole (its user may still be mid-task). Recorded per user message, so a
        retry or a second timer changes nothing."""
        memory = params.memory
        with job_span("prepare_sleep", memory.tenant_id), _bad_data_is_final():
            scored = await score_units(self.db, self.judge, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            try:
                cut = await cut_uncut(self.db, self.config, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            except NotFound:
                return MemoryStatus(exists=False)
            async with self.db.session() as session, session.begin():
                pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
                if pk is not None:
                    await lane.record_sleep_prepared(
                        session, tenant_id=memory.tenant_id, memory_pk=pk,
                        for_user_message_at=params.for_user_message_at, episodes_cut=cut.episodes,
                        units_scored=scored,
                    )
        activity.logger.info("sleep prepared", extra={"memory_id": memory.memory_id, "episodes": cut.episodes})
        return await self.status(memory.tenant_id, memory.memory_id)

    async def status(self, tenant_id: str, memory_id: str) -> MemoryStatus:
        async with self.db.session() as session:
            pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id=memory_id)
            if pk is None:
                return MemoryStatus(exists=False)
            f = await lane.figures(session, tenant_id=tenant_id, memory_pk=pk)
            owed = f.last_user_message_at is not None and await idle.idle_owed(session, tenant_id=tenant_id,
                                                                                memory_pk=pk)
        since = f.note_ask_since
        return MemoryStatus(
            last_turn=f.last_turn,
            last_user_message_at=f.last_user_message_at,
            sleep_due_at=f.last_user_message_at + self.config.sleep_after if f.last_user_message_at else None,
            sleep_prepared_for=f.sleep_prepared_for,
            note_ask_since=since,
            note_asks=f.note_asks,
            note_ask_first_turn=f.note_ask_first_turn,
            note_ask_last_turn=f.note_ask_last_turn,
            note_ask_over_calls=since is not None and f.note_asks >= self.note_ask.calls,
            note_ask_due_at=since + timedelta(minutes=self.note_ask.minutes) if since else None,
            leaving_episodes=f.leaving_episodes,
            backlog=f.backlog,
            parked_jobs=f.parked_jobs,
            idle_due_at=f.last_user_message_at + self.config.user_idle if owed and f.last_user_message_at else None,
        )
