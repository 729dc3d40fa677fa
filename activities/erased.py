"""A lane job whose memory is erased while it runs ends quietly.

The erase deletes every row of the memory and terminates its workflow, but a job already running finishes its
judge call and then writes for a memory that is gone (a foreign key violation, or a row not found). Nothing is
lost, since the memory's data is meant to be gone; this turns that failure into a benign, final `MemoryErased`
error, logged at info, instead of an error with a traceback in the worker's log after every erase of a busy
memory. A failure while the memory still exists is raised as it was, unless it is a write pointing at the
memory's old row (the memory was erased and one of the same name created since).
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from contracts.lane_names import MEMORY_ERASED
from contracts.lane_types import IdleInput, JobInput, MemoryRef, SleepInput
from store.db import Database, points_at_a_gone_memory
from store.repositories import lane

__all__ = ["ErasedMeanwhile"]


def _memory_of(args: Any) -> MemoryRef | None:
    """The memory of a job's input. The lane's bookkeeping (read, record, park events) is left alone: the
    workflow does not catch its failures, and it finds an erased memory's rows gone without failing."""
    for arg in args:
        if isinstance(arg, JobInput | SleepInput | IdleInput):
            return arg.memory
    return None


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, db: Database) -> None:  # noqa: A002
        super().__init__(next)
        self.db = db

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:  # noqa: A002 - the SDK's name
        try:
            return await super().execute_activity(input)
        except Exception as failure:
            memory = _memory_of(input.args)
            if memory is None or not await self._erased(memory, failure):
                raise
            activity.logger.info("lane job ended: its memory was erased while it ran", extra={
                "memory_id": memory.memory_id, "job": activity.info().activity_type})
            raise ApplicationError(
                f"memory {memory.memory_id!r} was erased while {activity.info().activity_type} ran",
                type=MEMORY_ERASED, non_retryable=True, category=ApplicationErrorCategory.BENIGN,
            ) from failure

    async def _erased(self, memory: MemoryRef, failure: BaseException) -> bool:
        return points_at_a_gone_memory(failure) or not await self._exists(memory)

    async def _exists(self, memory: MemoryRef) -> bool:
        """Whether the memory is still there; True (the failure stands) when that cannot be read either."""
        try:
            async with self.db.session() as session:
                return await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id) \
                    is not None
        except Exception:  # noqa: BLE001 - Postgres away: the original failure is the one to report
            return True


class ErasedMeanwhile(Interceptor):
    """Inside `TenantScope`, so its own read of the memory passes row-level security."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:  # noqa: A002
        return _Inbound(next, self.db)
