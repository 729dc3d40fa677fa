"""The gateway's housekeeping: answers kept for idempotent retries are deleted once they expire.

Runs in every gateway replica; the sweep takes rows with SKIP LOCKED, so replicas never fight over them.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from service.background import BackgroundLoop
from store.db import Database, system_scope
from store.repositories import idempotency

__all__ = ["Housekeeping"]

log = logging.getLogger(__name__)


class Housekeeping(BackgroundLoop):
    name = "housekeeping"

    def __init__(self, db: Database, *, keep: timedelta, every_seconds: float = 600.0) -> None:
        super().__init__()
        self.db, self.keep, self.every_seconds = db, keep, every_seconds

    async def sweep_once(self, now: datetime | None = None) -> int:
        """Delete every expired answer, a batch per transaction; returns how many went."""
        before = (now or datetime.now(UTC)) - self.keep
        total = 0
        while True:
            with system_scope():  # every tenant's expired answers
                async with self.db.session() as session, session.begin():
                    deleted = await idempotency.delete_expired(session, before=before)
            total += deleted
            if deleted == 0:
                return total

    async def _run(self) -> None:
        while True:
            try:
                deleted = await self.sweep_once()
                if deleted:
                    log.info("expired idempotency answers deleted", extra={"count": deleted})
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - an outage only delays the sweep
                log.warning("housekeeping sweep failed; will retry", exc_info=True)
            await asyncio.sleep(self.every_seconds)
