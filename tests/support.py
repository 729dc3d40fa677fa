"""Small helpers the tests share: free ports and polling until something holds."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def eventually(check: Callable[[], Awaitable[T]], *, timeout: float = 20.0, every: float = 0.2) -> T:
    """Poll `check` until it returns a truthy value; fail with its last value after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(every)
    raise AssertionError(f"condition not met within {timeout} s (last value: {last!r})")
