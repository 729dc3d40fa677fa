"""A loop the gateway runs beside its requests for as long as it lives (the relay, housekeeping)."""

from __future__ import annotations

import asyncio
from contextlib import suppress

__all__ = ["BackgroundLoop"]


class BackgroundLoop:
    name = "background"

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        raise NotImplementedError

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
