"""One database, one embedder precision: the first start records it, later starts follow it, and an explicit
setting that disagrees is refused. Each test has a database of its own, as a deployment would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from cli.gateway import build_recaller
from cli.precision import settle_precision, settled, settled_apart
from config.settings import Settings
from contracts.errors import InvalidInput
from providers.precision import Precision
from store.db import Database
from store.migrate import _alembic_config, upgrade_to_head
from store.rls import APP_ROLE
from tests.support import fresh_database


@pytest.fixture
async def deployment(postgres_url: str) -> str:
    return await fresh_database(postgres_url)


@pytest.fixture
async def app_db(deployment: str) -> AsyncIterator[Database]:
    """As the gateway and worker connect: the app role, bound by row-level security."""
    database = Database(deployment, pool_size=1, role=APP_ROLE, strict=True)
    yield database
    await database.dispose()


def _settings(url: str, precision: Literal["auto", "int8", "float32"]) -> Settings:
    return Settings(_env_file=None, database_url=url, embedder="local",  # type: ignore[call-arg]
                    embedder_precision=precision, recall=True)


def _never(measure_now: bool) -> Precision:
    raise AssertionError("an explicit precision must not be measured")


async def _recorded(url: str) -> list[str]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT value FROM deployment_settings WHERE key = "
                                                 "'embedder_precision'"))
            return list(rows.scalars())
    finally:
        await engine.dispose()


async def test_the_first_auto_start_records_and_later_starts_follow(
    deployment: str, app_db: Database, caplog: pytest.LogCaptureFixture,
) -> None:
    assert await _recorded(deployment) == []
    caplog.set_level("INFO", logger="cli.precision")
    assert await settle_precision(app_db, wanted="auto", prefer=lambda measure_now: "float32") == "float32"
    assert await _recorded(deployment) == ["float32"]
    assert "recorded for this database" in caplog.text

    # A later process on a machine known to take int8 uses the record, and says so, without timing anything.
    caplog.clear()
    asked: list[bool] = []
    assert await settle_precision(app_db, wanted="auto", prefer=lambda now: asked.append(now) or "int8") == "float32"
    assert "would have preferred int8" in caplog.text
    assert asked == [False]
    assert await settle_precision(app_db, wanted="float32", prefer=_never) == "float32"
    assert await _recorded(deployment) == ["float32"]


async def test_an_explicit_precision_against_the_record_is_refused(deployment: str, app_db: Database) -> None:
    # The gateway's way (built outside any loop of its own) records an explicit setting too.
    explicit = _settings(deployment, "int8")
    assert settled_apart(explicit.models, explicit.database).embedder_precision == "int8"
    with pytest.raises(InvalidInput) as caught:
        await settled(_settings(deployment, "float32").models, app_db)  # the worker's way
    assert caught.value.field == "embedder_precision"
    assert "LETHE_EMBEDDER_PRECISION is float32, but this database records int8" in caught.value.message
    assert "Unset LETHE_EMBEDDER_PRECISION" in caught.value.message
    assert await _recorded(deployment) == ["int8"]


async def test_the_gateway_embeds_in_the_recorded_precision(deployment: str, app_db: Database) -> None:
    await settle_precision(app_db, wanted="float32", prefer=_never)
    recaller = build_recaller(_settings(deployment, "auto"))
    assert recaller is not None
    assert recaller.embedder.model_id == "local/all-MiniLM-L6-v2-onnx-int8"  # float32: no /dynamic-int8


async def test_a_database_holding_vectors_from_before_records_int8(postgres_url: str) -> None:
    url = await fresh_database(postgres_url, migrated=False)
    config = _alembic_config(url)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            def to_0016(sync_connection) -> None:  # type: ignore[no-untyped-def]
                config.attributes["connection"] = sync_connection
                command.upgrade(config, "0016")

            await connection.run_sync(to_0016)
            await connection.execute(text("INSERT INTO tenants (id, name) VALUES ('t_old', 'old')"))
            pk = (await connection.execute(text(
                "INSERT INTO memories (tenant_id, memory_id) VALUES ('t_old', 'm') RETURNING id"))).scalar_one()
            await connection.execute(text(
                "INSERT INTO entities (memory_pk, tenant_id, name, embedding, origin, at) "
                "VALUES (:pk, 't_old', 'Lisbon', :vector, 'test', now())"),
                {"pk": pk, "vector": "[" + ",".join(["0.05"] * 384) + "]"})
    finally:
        await engine.dispose()
    await upgrade_to_head(url)
    assert await _recorded(url) == ["int8"]
