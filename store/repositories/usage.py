"""Model usage per tenant and memory, for cost accounting."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from store.models import ModelUsageRow

__all__ = ["record_usage"]


def record_usage(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_id: str | None,
    provider: str,
    model: str,
    purpose: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> None:
    session.add(
        ModelUsageRow(
            tenant_id=tenant_id,
            memory_id=memory_id,
            provider=provider,
            model=model,
            purpose=purpose,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
    )
