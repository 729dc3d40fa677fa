"""Apply Alembic migrations from code, so `lethe migrate`, `lethe dev` and the tests share one path."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.ext.asyncio import create_async_engine

__all__ = ["upgrade_to_head"]

MIGRATIONS = Path(__file__).parent / "migrations"


def _alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def upgrade_to_head(url: str) -> None:
    """Migrate the database at `url` to the newest revision (a no-op when it is there already)."""
    config = _alembic_config(url)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            # Serialise concurrent migrators (several pods starting at once) on an advisory lock.
            await connection.exec_driver_sql("SELECT pg_advisory_xact_lock(7415)")

            def _upgrade(sync_connection) -> None:  # type: ignore[no-untyped-def]
                config.attributes["connection"] = sync_connection
                command.upgrade(config, "head")

            await connection.run_sync(_upgrade)
    finally:
        await engine.dispose()
