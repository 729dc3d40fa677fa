"""Session-wide real services: the embedded Postgres, the Temporal dev server, a worker and the gateway.

Started once per test session on free ports and private data directories, never the defaults, so tests
can run beside `make run`. A service that cannot start fails the tests; nothing is mocked or skipped.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from cli.worker import build_worker
from config.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres, self_check
from store.migrate import upgrade_to_head
from tests.support import dev_server, free_port, serve_gateway

ADMIN_TOKEN = "test-admin-token-" + uuid.uuid4().hex


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    # Not under pytest's tmp dir: that is private to root, and Postgres runs as its own system user.
    root = Path(tempfile.mkdtemp(prefix="lethe-test-pg-"))
    root.chmod(0o755)
    server = EmbeddedPostgres(root / "data")
    url = server.start()
    asyncio.run(self_check(url, log_file=server.log_file))
    asyncio.run(upgrade_to_head(url))
    yield url
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    env = await dev_server()
    yield env
    await env.shutdown()


@pytest.fixture(scope="session")
def temporal_client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture(scope="session")
def settings(postgres_url: str, temporal_client: Client) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        env="development",
        database_url=postgres_url,
        temporal_address=temporal_client.service_client.config.target_host,
        temporal_task_queue="lethe-test-" + uuid.uuid4().hex[:8],
        admin_token=SecretStr(ADMIN_TOKEN),
        allow_clock_override=True,
        port=free_port(),
        worker_health_port=0,
        data_dir=Path("/nonexistent-tests-never-use-the-data-dir"),
        # Recall off for the gateways built from these settings: each decorate's search and walk cost the
        # suite minutes on 2 cores. The gateways of recall's, the inspector's and the proxy's tests turn it on.
        recall=False,
        # One precision for every embedder the tests build, whatever this machine's `auto` would take: recall's
        # tests compare the stack's vectors with ones they embed themselves.
        embedder_precision="int8",
        # The proxy's tests name their fake upstream on this machine in X-Lethe-Upstream-Base-URL.
        upstream_url_allow="127.0.0.1",
    )


@pytest.fixture(scope="session")
async def db(settings: Settings) -> AsyncIterator[Database]:
    database = Database(settings.database.url, pool_size=5)
    yield database
    await database.dispose()


@pytest.fixture(scope="session")
async def worker(temporal_client: Client, settings: Settings) -> AsyncIterator[None]:
    # As in production: the app role, bound by row-level security, each activity bound to its tenant.
    app_db = Database(settings.database.url, pool_size=5, role=settings.database.role, strict=True)
    running = build_worker(temporal_client, app_db, task_queue=settings.temporal.task_queue)
    async with running:
        yield
    await app_db.dispose()


@pytest.fixture(scope="session")
async def gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    """The real gateway over real HTTP on a free port."""
    async with serve_gateway(settings) as url:
        yield url


@pytest.fixture
async def http(gateway: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        yield client


async def _new_tenant(http: httpx.AsyncClient, prefix: str) -> tuple[str, str]:
    response = await http.post(
        "/v1/admin/tenants", json={"name": f"{prefix}-{uuid.uuid4().hex}"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    return body["tenant_id"], body["api_key"]


@pytest.fixture
async def tenant(http: httpx.AsyncClient) -> tuple[str, str]:
    """A fresh tenant per test (id, API key): tests stay isolated without truncating tables."""
    return await _new_tenant(http, "tenant")


@pytest.fixture
async def other_tenant(http: httpx.AsyncClient) -> tuple[str, str]:
    return await _new_tenant(http, "other")
