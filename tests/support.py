"""Small helpers the tests share: free ports, polling until something holds, a gateway to talk to."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import uvicorn
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from cli.gateway import build_app
from config.settings import Settings
from store.migrate import upgrade_to_head

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


@asynccontextmanager
async def serve_gateway(settings: Settings) -> AsyncIterator[str]:
    """The real gateway on `settings.port`, over real HTTP, for as long as the block runs."""
    server = uvicorn.Server(uvicorn.Config(build_app(settings), host="127.0.0.1", port=settings.port,
                                           log_level="warning"))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{settings.port}"
    finally:
        server.should_exit = True
        await task


async def fresh_database(postgres_url: str) -> str:
    """A new, migrated database on the same server: for a test that stands up a deployment of its own.

    Deployments must not share a database: each gateway's relay delivers every undelivered event it finds
    to its own Temporal, so two deployments on one database would run each other's lanes.
    """
    name = "lethe_" + uuid.uuid4().hex[:12]
    engine = create_async_engine(postgres_url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        await connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    await engine.dispose()
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    await upgrade_to_head(url)
    return url
