"""Idempotency records: a retried write gets its first answer back, byte for byte, and stores nothing twice."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import Conflict
from store.models import IdempotencyRow

__all__ = ["Replay", "delete_expired", "find_replay", "forget", "remember_answer"]

# Fast over strong: a decorate's answer is the whole request, written on every call and rarely read.
_COMPRESSION_LEVEL = 1


@dataclass(frozen=True)
class Replay:
    status_code: int
    body: bytes  # the answer's JSON as first sent


# Built once: every decorate and report looks for its replay.
_REPLAY = select(IdempotencyRow.body_hash, IdempotencyRow.status_code, IdempotencyRow.response_zlib,
                 IdempotencyRow.response).where(
    IdempotencyRow.tenant_id == bindparam("tenant_id"), IdempotencyRow.memory_id == bindparam("memory_id"),
    IdempotencyRow.endpoint == bindparam("endpoint"), IdempotencyRow.key == bindparam("key"),
)


async def find_replay(
    session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str, body_hash: str
) -> Replay | None:
    """The first answer for this key, or None. The same key with another body is a conflict."""
    record = (await session.execute(_REPLAY, {"tenant_id": tenant_id, "memory_id": memory_id, "endpoint": endpoint,
                                              "key": key})).one_or_none()
    if record is None:
        return None
    stored_hash, status_code, compressed, legacy = record
    if stored_hash != body_hash:
        raise Conflict(f"Idempotency-Key {key!r} was already used for a different {endpoint} body")
    body = zlib.decompress(compressed) if compressed is not None else json.dumps(legacy).encode()
    return Replay(status_code, body)


def remember_answer(
    session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str, body_hash: str,
    body: bytes, status_code: int = 200,
) -> None:
    session.add(IdempotencyRow(
        tenant_id=tenant_id, memory_id=memory_id, endpoint=endpoint, key=key, body_hash=body_hash,
        status_code=status_code, response_zlib=zlib.compress(body, _COMPRESSION_LEVEL),
    ))


async def forget(session: AsyncSession, *, tenant_id: str, memory_id: str, endpoint: str, key: str) -> None:
    await session.execute(delete(IdempotencyRow).where(
        IdempotencyRow.tenant_id == tenant_id, IdempotencyRow.memory_id == memory_id,
        IdempotencyRow.endpoint == endpoint, IdempotencyRow.key == key,
    ))


async def delete_expired(session: AsyncSession, *, before: datetime, limit: int = 1000) -> int:
    """Delete up to `limit` answers written before `before`; returns how many went."""
    oldest = (
        select(IdempotencyRow.id).where(IdempotencyRow.created_at < before)
        .order_by(IdempotencyRow.created_at).limit(limit)
        .with_for_update(skip_locked=True)  # replicas sweeping at once take different rows
    )
    result = await session.execute(delete(IdempotencyRow).where(IdempotencyRow.id.in_(oldest)))
    return result.rowcount or 0
