"""Lethe's own metrics, all defined here: what the gateway and the worker measure, under the names Prometheus shows.

OpenTelemetry instruments on the process's one meter provider (`cli.telemetry.configure_metrics`), read as
Prometheus text on `/metrics` and pushed over OTLP when `LETHE_OTLP_ENDPOINT` is set. Before a provider is
installed (unit tests, a library use) every call here costs next to nothing and records nothing.

Their Prometheus names (docs/operating.md says what each means):
- the gateway: `lethe_memory_cache_hits_total`, `lethe_memory_cache_misses_total` (decorate),
  `lethe_recall_blocks_total{provenance}` (decorate), `lethe_relay_lag_seconds` (the outbox relay);
- the worker: `lethe_activity_duration_seconds{activity,outcome}` (`activities.timing`), and from `LaneGauges`
  `lethe_lane_backlog`, `lethe_lane_backlog_memories`, `lethe_lane_backlog_memory{tenant_id,memory_id}`,
  `lethe_lane_parked_jobs`, `lethe_note_asks_pending`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

from store.db import Database, system_scope
from store.repositories.lane_totals import LaneTotals, lane_totals

__all__ = ["ACTIVITY_DURATION", "LaneGauges", "LaneSnapshot", "count_cache", "count_recall", "observe_relay_lag",
           "publish"]

log = logging.getLogger(__name__)
_meter = metrics.get_meter("lethe")

# Seconds: from a few milliseconds (a signal right after commit) to minutes (Temporal away, a judge's batch).
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

_CACHE_HITS = _meter.create_counter(
    "lethe.memory_cache.hits", unit="{lookup}",
    description="Decorates that found their memory's history in the gateway's memory cache")
_CACHE_MISSES = _meter.create_counter(
    "lethe.memory_cache.misses", unit="{lookup}",
    description="Decorates that read their memory's history from Postgres whole (not cached, evicted, or rewritten)")
_RECALL_BLOCKS = _meter.create_counter(
    "lethe.recall.blocks", unit="{block}",
    description="Recall for a new user message, by how its block was made: prepared (the lane's walk), inline "
                "(walked in time), hits (searched, not walked), partial (searches cut short), none (no block)")
_RELAY_LAG = _meter.create_histogram(
    "lethe.relay.lag", unit="s", explicit_bucket_boundaries_advisory=_SECONDS,
    description="How long a lane event waited in the outbox before the relay delivered it to the memory's workflow")
ACTIVITY_DURATION = _meter.create_histogram(
    "lethe.activity.duration", unit="s", explicit_bucket_boundaries_advisory=_SECONDS,
    description="Time each lane activity took on the worker, by activity and outcome (ok, failed)")


def count_cache(hit: bool) -> None:
    (_CACHE_HITS if hit else _CACHE_MISSES).add(1)


def count_recall(provenance: str | None) -> None:
    """One recall for a new user message: its block's provenance, or None when no block was made."""
    _RECALL_BLOCKS.add(1, {"provenance": provenance or "none"})


def observe_relay_lag(created: Iterable[datetime], delivered_at: datetime) -> None:
    for at in created:
        _RELAY_LAG.record(max(0.0, (delivered_at - at).total_seconds()))


# Lane figures: read from Postgres (and Temporal's visibility) by a loop every REFRESH_SECONDS into a snapshot
# the observable gauges' callbacks read. The callbacks are synchronous and run on every scrape; the database is
# async and a query per scrape would let a burst of scrapes (several Prometheus replicas, a curl loop) load it.
REFRESH_SECONDS = 15.0
# Per-memory backlog only for the memories with the most pending events, at most this many: a label per memory
# id would otherwise give Prometheus a series for every memory that ever had a backlog (unbounded cardinality).
# The total and the number of memories with a backlog cover the rest; the Temporal UI lists them all
# (`LetheLaneBacklog > 0`).
TOP_MEMORIES = 20


@dataclass(frozen=True)
class LaneSnapshot:
    totals: LaneTotals
    note_asks_pending: int | None
    stale_at: float  # time.monotonic() after which the loop has missed several refreshes


_latest: list[LaneSnapshot] = []


def _fresh() -> LaneSnapshot | None:
    """The snapshot, unless the loop has stopped refreshing it: a figure gone stale is absent, not wrong."""
    if not _latest or time.monotonic() > _latest[0].stale_at:
        return None
    return _latest[0]


def publish(totals: LaneTotals, note_asks_pending: int | None, *, fresh_for: float) -> LaneSnapshot:
    """What the lane gauges show from now on, for at most `fresh_for` seconds."""
    snapshot = LaneSnapshot(totals, note_asks_pending, time.monotonic() + fresh_for)
    _latest[:] = [snapshot]
    return snapshot


def _observer(read: Callable[[LaneSnapshot], list[Observation]]) -> Callable[[CallbackOptions], list[Observation]]:
    def observe(options: CallbackOptions) -> list[Observation]:
        snapshot = _fresh()
        return read(snapshot) if snapshot is not None else []
    return observe


_meter.create_observable_gauge(
    "lethe.lane.backlog", unit="{event}", description="Lane events not yet processed, all memories",
    callbacks=[_observer(lambda s: [Observation(s.totals.backlog)])])
_meter.create_observable_gauge(
    "lethe.lane.backlog.memories", unit="{memory}", description="Memories with lane events not yet processed",
    callbacks=[_observer(lambda s: [Observation(s.totals.memories)])])
_meter.create_observable_gauge(
    "lethe.lane.backlog.memory", unit="{event}",
    description=f"Lane events not yet processed, for the {TOP_MEMORIES} memories with the most",
    callbacks=[_observer(lambda s: [Observation(n, {"tenant_id": t, "memory_id": m})
                                    for t, m, n in s.totals.largest])])
_meter.create_observable_gauge(
    "lethe.lane.parked_jobs", unit="{job}", description="Lane jobs parked after failing (rows kept for operators)",
    callbacks=[_observer(lambda s: [Observation(s.totals.parked_jobs)])])
_meter.create_observable_gauge(
    "lethe.note_asks.pending", unit="{memory}",
    description="Memories whose note ask counts as pending (LetheNoteAskPending = true in Temporal)",
    callbacks=[_observer(lambda s: [] if s.note_asks_pending is None else [Observation(s.note_asks_pending)])])


class LaneGauges:
    """Refreshes the lane figures' snapshot every `every_seconds`, for as long as the worker runs."""

    def __init__(self, db: Database, *, note_asks_pending: Callable[[], Awaitable[int]] | None = None,
                 every_seconds: float = REFRESH_SECONDS, top: int = TOP_MEMORIES) -> None:
        self.db = db
        self.note_asks_pending = note_asks_pending
        self.every_seconds = every_seconds
        self.top = top

    async def refresh_once(self) -> LaneSnapshot:
        # Every tenant's lanes: deliberately cross-tenant, ids and counts only (store/rls.py).
        with system_scope():
            async with self.db.session() as session:
                totals = await lane_totals(session, top=self.top)
        pending = None
        if self.note_asks_pending is not None:
            try:
                pending = await self.note_asks_pending()
            except Exception:  # noqa: BLE001 - Temporal away: that figure is absent, the others still count
                log.warning("could not count pending note asks", exc_info=True)
        return publish(totals, pending, fresh_for=4 * self.every_seconds)

    async def run_beside(self, worker: asyncio.Future[Any]) -> None:
        """Refresh until `worker` ends: it stops with the worker, before the worker's database is closed."""
        while not worker.done():
            try:
                await self.refresh_once()
            except Exception:  # noqa: BLE001 - Postgres away: the figures go stale (absent), the worker goes on
                log.warning("could not read the lane figures for metrics", exc_info=True)
            await asyncio.wait({worker}, timeout=self.every_seconds)
