"""Heartbeats that say the worker is alive, not how far a job got.

A long lane job (scoring a batch of facts against every remembered episode, writing the graph) heartbeats after
each batch. On a worker saturated by a bulk import one batch can take longer than the heartbeat timeout: the
server then cancels a job that was only slow, retries it into the same queue, and after the last attempt the
lane parks it, so its traces or facts are never written. Heartbeating from a task of its own, every half
timeout, tells a slow job from a dead worker (whose heartbeats stop with it) and leaves the start-to-close
timeout to end a job that is truly stuck. The pattern is samples-python's `custom_decorator.auto_heartbeater`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from temporalio import activity

__all__ = ["heartbeating"]

P = ParamSpec("P")
T = TypeVar("T")


def heartbeating(fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Put under `@activity.defn`: while the activity runs, heartbeat every half of its heartbeat timeout
    (nothing when it has none). The job's own progress heartbeats go on as before."""

    @functools.wraps(fn)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        timeout = activity.info().heartbeat_timeout
        if not timeout:
            return await fn(*args, **kwargs)
        beating = asyncio.create_task(_beat(timeout.total_seconds() / 2))
        try:
            return await fn(*args, **kwargs)
        finally:
            beating.cancel()
            await asyncio.gather(beating, return_exceptions=True)

    return run


async def _beat(every: float) -> None:
    while True:
        await asyncio.sleep(every)
        activity.heartbeat()
