"""A lane transaction held open between its two writes, for tests of what waits for what on a memory's row."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import text

from engine.episodes import Episode, EpisodeState
from engine.passages import PassageText
from engine.traces import Trace
from store.db import Database
from store.repositories import trace_store
from store.repositories.search import insert_passages

NOW = datetime(2026, 3, 1, tzinfo=UTC)
# A memory's first episode: turn 1, its two messages. The held write's passage and trace are on it.
FIRST = Episode(id="ep-1-2", state=EpisodeState.LIVE, first_seq=1, last_seq=2, first_turn=1, last_turn=1, tokens=10,
                at=NOW)


class HeldLaneWrite:
    """The lane indexing, then changing what the engine reads, in one transaction: a passage (its foreign key holds
    a key-share lock on the memory's row until commit), then, once `go_on` is set, a trace on episode FIRST
    (whose change stamp locks that row for update)."""

    def __init__(self, db: Database, *, tenant_id: str, memory_pk: int) -> None:
        self.db, self.tenant_id, self.memory_pk = db, tenant_id, memory_pk
        self.added, self.go_on = asyncio.Event(), asyncio.Event()
        self.pid = 0  # its backend, once the passage is in

    async def run(self) -> None:
        async with self.db.session() as session, session.begin():
            self.pid = (await session.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            await insert_passages(session, tenant_id=self.tenant_id, memory_pk=self.memory_pk, episode_key=FIRST.id,
                                  passages=[PassageText(0, 1, 2, 1, 1, "Dana owns the pricing page.")],
                                  vectors=np.full((1, 384), 1 / np.sqrt(384), dtype=np.float32), at=NOW,
                                  language="simple")
            self.added.set()
            await self.go_on.wait()
            await trace_store.add_traces(session, tenant_id=self.tenant_id, memory_pk=self.memory_pk, traces=[
                Trace(at=NOW, score=0.5, counted=True, episode_id=FIRST.id)])
