"""A tenant's own ceilings per model: set, cleared and read as the table `engine.ceilings` takes."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import NotFound
from store.models import ModelCeilingRow, TenantRow

__all__ = ["clear_ceiling", "set_ceiling", "tenant_ceilings"]


async def tenant_ceilings(session: AsyncSession, *, tenant_id: str, known: bool = False) -> dict[str, int]:
    """The tenant's table; `known`: a tenant that does not exist is a NotFound (not an empty table)."""
    if known and await session.get(TenantRow, tenant_id) is None:
        raise NotFound(f"no tenant {tenant_id!r}")
    rows = await session.execute(select(ModelCeilingRow.model, ModelCeilingRow.ceiling_tokens)
                                 .where(ModelCeilingRow.tenant_id == tenant_id))
    return {model: tokens for model, tokens in rows.all()}


async def set_ceiling(session: AsyncSession, *, tenant_id: str, model: str, ceiling_tokens: int,
                      at: datetime) -> None:
    if await session.get(TenantRow, tenant_id) is None:
        raise NotFound(f"no tenant {tenant_id!r}")
    await session.execute(
        insert(ModelCeilingRow).values(tenant_id=tenant_id, model=model, ceiling_tokens=ceiling_tokens, updated_at=at)
        .on_conflict_do_update(index_elements=["tenant_id", "model"],
                               set_={"ceiling_tokens": ceiling_tokens, "updated_at": at}))


async def clear_ceiling(session: AsyncSession, *, tenant_id: str, model: str) -> bool:
    """Whether there was one to clear."""
    result = await session.execute(delete(ModelCeilingRow).where(
        ModelCeilingRow.tenant_id == tenant_id, ModelCeilingRow.model == model))
    return bool(result.rowcount)  # type: ignore[attr-defined]
