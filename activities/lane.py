"""The lane's activities: read the memory's next events and run one, each idempotent by its ids."""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio import activity

from activities.types import EventRef, FetchEventsInput, RunEventInput
from store.db import Database
from store.repositories import outbox

__all__ = ["LaneActivities"]


class LaneActivities:
    """Registered bound, so the worker owns the database pool and activities stay tiny."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @activity.defn
    async def fetch_events(self, params: FetchEventsInput) -> list[EventRef]:
        async with self.db.session() as session:
            rows = await outbox.events_after(
                session,
                tenant_id=params.memory.tenant_id,
                memory_id=params.memory.memory_id,
                after_seq=params.after_seq,
                limit=params.limit,
            )
        return [EventRef(seq=seq, kind=kind) for seq, kind in rows]

    @activity.defn
    async def record_event(self, params: RunEventInput) -> bool:
        """Mark the event processed. For now this is the whole job; later kinds do their work first."""
        async with self.db.session() as session, session.begin():
            changed = await outbox.mark_processed(
                session,
                tenant_id=params.memory.tenant_id,
                memory_id=params.memory.memory_id,
                seq=params.event.seq,
                at=datetime.now(UTC),
            )
        activity.logger.info(
            "lane event processed",
            extra={"memory_id": params.memory.memory_id, "seq": params.event.seq, "first_time": changed},
        )
        return changed
