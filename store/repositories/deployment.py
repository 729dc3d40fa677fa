"""Deployment-wide settings recorded in the database: the one repository without a tenant, because what it
keeps (the embedded model's precision) binds every tenant's vectors alike."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import DeploymentSettingRow

__all__ = ["EMBEDDER_PRECISION", "record", "recorded"]

EMBEDDER_PRECISION = "embedder_precision"


async def recorded(session: AsyncSession, *, key: str) -> str | None:
    """The value recorded under `key`, or None when no process has recorded one yet."""
    return (await session.execute(
        select(DeploymentSettingRow.value).where(DeploymentSettingRow.key == key))).scalar_one_or_none()


async def record(session: AsyncSession, *, key: str, value: str) -> str:
    """Record `value` under `key` unless a value is there already; returns what is recorded. Processes starting
    at once race here: the first insert wins and the others get its value."""
    await session.execute(insert(DeploymentSettingRow).values(key=key, value=value).on_conflict_do_nothing())
    found = await recorded(session, key=key)
    assert found is not None  # inserted just now, or by the process that won
    return found
