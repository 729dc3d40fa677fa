"""The outbox relay: signals memory workflows after commit, and resends whatever did not get through.

Runs in the gateway process. A Temporal outage only delays the signals: rows stay undelivered in Postgres
and go out, in order, once Temporal answers again.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from datetime import UTC, datetime, timedelta

from opentelemetry import context as otel_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from temporalio.client import Client
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError, RPCStatusCode

from contracts import lane_names as names
from service.background import BackgroundLoop
from service.metrics import observe_relay_lag
from store.db import Database, system_scope
from store.repositories import lane, outbox

_TENANT = SearchAttributeKey.for_keyword(names.TENANT.name)
_MEMORY = SearchAttributeKey.for_keyword(names.MEMORY.name)

__all__ = ["OutboxRelay", "TemporalClient", "end_workflow", "signal_memory"]

# The gateway's Temporal client, named here: this module is the gateway's one seam to Temporal.
TemporalClient = Client

log = logging.getLogger(__name__)

# A signal that takes longer than this counts as failed: the rows stay undelivered and go out on the next try.
SIGNAL_TIMEOUT = timedelta(seconds=5)


class OutboxRelay(BackgroundLoop):
    name = "outbox-relay"

    def __init__(
        self, db: Database, client: Client, *, task_queue: str, retry_seconds: float = 2.0,
        gather_seconds: float = 0.25,
    ) -> None:
        super().__init__()
        self.db = db
        self.client = client
        self.task_queue = task_queue
        self.retry_seconds = retry_seconds
        # After a wake-up, events that follow within this time go out with it: a decorate and its report
        # become one signal (one workflow task, a shorter history) and the relay steals less of the
        # gateway's time from the calls themselves. A report ends the wait: its turn is over, nothing more is
        # coming soon, and the lane's work for the turn (the next walk among it) is best done before the next
        # user message, not beside its decorate.
        self.gather_seconds = gather_seconds
        self._wake = asyncio.Event()
        self._turn_over = asyncio.Event()
        self.healthy = True  # last attempt reached Temporal

    def wake(self, *, turn_over: bool = False) -> None:
        """Called after a commit: deliver soon, without making the caller wait; with `turn_over` (a report),
        at once."""
        self._wake.set()
        if turn_over:
            self._turn_over.set()

    def start(self) -> None:
        super().start()
        self.wake()  # rows left by a previous process go out at start

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.retry_seconds * 5)
            except TimeoutError:
                pass  # a periodic sweep catches rows whose wake-up was lost
            with suppress(TimeoutError):  # a report set it already, or ends the wait when it comes
                await asyncio.wait_for(self._turn_over.wait(), timeout=self.gather_seconds)
            self._wake.clear()
            self._turn_over.clear()
            try:
                while await self.deliver_once():
                    pass
                self.healthy = True
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - any failure: keep the rows, try again shortly
                self.healthy = False
                log.warning("outbox relay could not deliver; will retry", exc_info=True)
                await asyncio.sleep(self.retry_seconds)
                self._wake.set()

    async def deliver_once(self) -> int:
        """Signal every memory with undelivered events once; returns how many were signalled."""
        # Every tenant's events: deliberately cross-tenant (store/rls.py).
        with system_scope():
            return await self._deliver_all()

    async def _deliver_all(self) -> int:
        async with self.db.session() as session, session.begin():
            pending = await outbox.claim_undelivered(session)
            for item in pending:
                payload = await lane.event_payload(
                    session, tenant_id=item.tenant_id, memory_pk=item.memory_pk, seq=item.newest_seq
                )
                # The signal joins the trace of the call that wrote the newest event.
                token = otel_context.attach(TraceContextTextMapPropagator().extract(payload))
                try:
                    await self._signal(item)
                finally:
                    otel_context.detach(token)
                delivered_at = datetime.now(UTC)
                observe_relay_lag(await outbox.mark_delivered(
                    session, tenant_id=item.tenant_id, memory_pk=item.memory_pk,
                    up_to_seq=item.newest_seq, at=delivered_at,
                ), delivered_at)
        return len(pending)

    async def _signal(self, item: outbox.PendingDelivery) -> None:
        await signal_memory(self.client, task_queue=self.task_queue, tenant_id=item.tenant_id,
                            memory_id=item.memory_id, signal=names.EVENTS_SIGNAL,
                            args=[item.newest_seq, item.memory_pk])


async def signal_memory(client: TemporalClient, *, task_queue: str, tenant_id: str, memory_id: str, signal: str,
                        args: list[object]) -> None:
    """Signal the memory's workflow, starting it first when it is not running (signal-with-start)."""
    # By name, with the input's two ids (the rest of `MemoryWorkflowInput` has defaults): the gateway does not
    # import the workflow.
    await client.start_workflow(
        names.WORKFLOW_TYPE,
        {"tenant_id": tenant_id, "memory_id": memory_id},
        id=names.workflow_id(tenant_id, memory_id),
        task_queue=task_queue,
        start_signal=signal,
        start_signal_args=args,
        rpc_timeout=SIGNAL_TIMEOUT,
        search_attributes=TypedSearchAttributes(
            [SearchAttributePair(_TENANT, tenant_id), SearchAttributePair(_MEMORY, memory_id)]
        ),
    )


async def end_workflow(client: TemporalClient, *, tenant_id: str, memory_id: str) -> bool:
    """Terminate the memory's workflow; True when it is gone (or never ran), False when Temporal is away."""
    try:
        await client.get_workflow_handle(names.workflow_id(tenant_id, memory_id)).terminate(reason="memory erased")
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            return True
        log.warning("could not end the workflow of an erased memory", extra={"memory_id": memory_id})
        return False
    return True
