"""Idempotency records: a retried write gets its first answer back and stores nothing twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Conflict
from store.models import IdempotencyRecord

__all__ = ["Replay", "find_replay", "forget", "remember_answer"]


@dataclass(frozen=True)
class Replay:
    status_code: int
    response: dict[str, Any]


async def find_replay(
    session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str, body_hash: str
) -> Replay | None:
    """The first answer for this key, or None. The same key with another body is a conflict."""
    record = (
        await session.execute(
            select(IdempotencyRecord).where(
                IdempotencyRecord.tenant_id == tenant_id, IdempotencyRecord.memory_id == memory_id,
                IdempotencyRecord.endpoint == endpoint, IdempotencyRecord.key == key,
            )
        )
    ).scalar_one_or_none()
    if record is None:
        return None
    if record.body_hash != body_hash:
        raise Conflict(f"Idempotency-Key {key!r} was already used for a different {endpoint} body")
    return Replay(record.status_code, record.response)


def remember_answer(
    session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str, body_hash: str,
    response: dict[str, Any], status_code: int = 200,
) -> None:
    session.add(IdempotencyRecord(
        tenant_id=tenant_id, memory_id=memory_id, endpoint=endpoint, key=key, body_hash=body_hash,
        status_code=status_code, response=response,
    ))


async def forget(session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str) -> None:
    await session.execute(delete(IdempotencyRecord).where(
        IdempotencyRecord.tenant_id == tenant_id, IdempotencyRecord.memory_id == memory_id,
        IdempotencyRecord.endpoint == endpoint, IdempotencyRecord.key == key,
    ))
