"""What lets a find run under a deadline and be left behind by it without harm.

A find left behind by its deadline is never cut in the middle of a query: a query cancelled in flight costs
its connection (the pool drops it, and the next call pays for a new one: a Postgres backend, the driver's type
lookups, every statement prepared again), which under load costs more than the query's remaining milliseconds.
It stops at the next step's end instead (`Progress.step`), or at once when it is waiting on the embedder or
the judge (`abandon`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from store.repositories.recall_search import Searched

__all__ = ["Progress", "Stopped", "abandon", "finished", "let_go"]


class Stopped(Exception):
    """A find past its deadline ending at a step's end (`Progress.step`)."""


def let_go(task: asyncio.Future[Any]) -> None:
    """Leave a task to end unawaited; what it returns or raises then is of no interest."""
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


@dataclass
class Progress:
    """How far a find got, for a deadline that cuts it short: the memory, the prepared walk's kept facts,
    the searches' rankings so far and whether they all finished."""

    pk: int | None = None
    kept: dict[int, int] = field(default_factory=dict)
    searched: Searched = field(default_factory=Searched)
    searches_done: bool = False
    embedded: bool = False
    # When each step ended, in the loop's time: the log of a find cut short says where the time went.
    marks: dict[str, float] = field(default_factory=dict)
    # Queries in flight, and whether the find was left behind: it then ends as the last of them is back.
    querying: int = 0
    stopped: bool = False

    @contextlib.asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """Around a step that queries Postgres: not cancelled while it runs, and the find ends after it when
        left behind meanwhile."""
        self.querying += 1
        try:
            yield
        finally:
            self.querying -= 1
        if self.stopped:
            raise Stopped

    def mark(self, step: str) -> None:
        self.marks[step] = asyncio.get_running_loop().time()

    def steps(self, began: float) -> str:
        return ", ".join(f"{step} at {(at - began) * 1000:.0f} ms" for step, at in self.marks.items()) or "none"

    def summary(self, began: float) -> str:
        """What was done when the deadline passed, for the log."""
        return (f"memory read: {self.pk is not None}, message embedded: {self.embedded}, "
                f"{len(self.searched.broad) + len(self.searched.by_part)} fact searches done; steps "
                f"ended: {self.steps(began)}")


def abandon(task: asyncio.Future[Any], progress: Progress) -> None:
    """A find past its deadline (or its decorate gone): cancelled at once while it waits on the embedder or the
    judge, else told to stop when its query is back (the module's docstring says why)."""
    progress.stopped = True
    if progress.querying == 0:
        task.cancel()
    let_go(task)


async def finished(task: asyncio.Future[Any] | None) -> None:
    """Wait for a task querying on a session its caller is about to close, whatever the task ends with: a
    session closed under a query in flight would break its connection. A cancellation meanwhile is raised
    once the task is done."""
    if task is None:
        return
    let_go(task)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
