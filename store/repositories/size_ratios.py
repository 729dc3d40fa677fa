"""Size ratios: learned per tenant and model from the provider's counts, refined per memory."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.sizing import updated_ratio
from store.models import SizeRatioRow
from store.records import MemoryRecord, row_of

__all__ = ["learn", "ratio_for"]


async def ratio_for(session: AsyncSession, *, tenant_id: str, memory: MemoryRecord,
                    model: str | None) -> float | None:
    """The memory's own ratio for the model, else the tenant's, else None (no correction yet)."""
    if not model:
        return None
    own = memory.size_ratio(model)
    if own is not None:
        return own
    return (await session.execute(
        select(SizeRatioRow.ratio).where(SizeRatioRow.tenant_id == tenant_id, SizeRatioRow.model == model)
    )).scalar_one_or_none()


async def learn(
    session: AsyncSession, *, tenant_id: str, memory: MemoryRecord, model: str, provider_tokens: int,
    estimated_tokens: int, plausible: tuple[float, float], at: datetime,
) -> float | None:
    """One measurement of the request as sent: kept for the memory and for the tenant's model. Returns the
    ratio taken, or None when the measurement was implausible (nothing changes then)."""
    ratio = updated_ratio(None, provider_tokens, estimated_tokens, plausible=plausible)
    if ratio is None:
        return None
    row = row_of(memory)
    row.size_ratios = {**(row.size_ratios or {}), model: ratio}
    await session.execute(
        insert(SizeRatioRow).values(tenant_id=tenant_id, model=model, ratio=ratio, updated_at=at)
        .on_conflict_do_update(index_elements=["tenant_id", "model"], set_={"ratio": ratio, "updated_at": at})
    )
    return ratio
