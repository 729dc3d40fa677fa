"""Tenants and their API keys (kept hashed)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import Conflict, NotFound
from store.models import ApiKeyRow, TenantRow

__all__ = [
    "IssuedKey",
    "StoredKey",
    "StoredTenant",
    "tenant_exists",
    "create_tenant",
    "get_tenant_by_name",
    "issue_api_key",
    "list_keys",
    "revoke_key",
    "tenant_for_key",
]


@dataclass(frozen=True)
class IssuedKey:
    tenant_id: str
    tenant_name: str
    api_key: str  # shown once; only its hash is stored
    key_id: int = 0
    prefix: str = ""


@dataclass(frozen=True)
class StoredTenant:
    id: str
    name: str


@dataclass(frozen=True)
class StoredKey:
    """A key as listed: its id and first characters, never the key itself."""

    id: int
    prefix: str
    created_at: datetime
    revoked_at: datetime | None


def _key(row: ApiKeyRow) -> StoredKey:
    return StoredKey(id=row.id, prefix=row.prefix, created_at=row.created_at, revoked_at=row.revoked_at)


def hash_key(api_key: str) -> str:
    return hashlib.sha256(api_key.encode()).hexdigest()


async def create_tenant(session: AsyncSession, *, name: str) -> StoredTenant:
    tenant = TenantRow(id="t_" + secrets.token_hex(8), name=name)
    session.add(tenant)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise Conflict(f"a tenant named {name!r} already exists") from exc
    return StoredTenant(id=tenant.id, name=tenant.name)


async def tenant_exists(session: AsyncSession, *, tenant_id: str) -> bool:
    return await session.get(TenantRow, tenant_id) is not None


async def get_tenant_by_name(session: AsyncSession, *, name: str) -> StoredTenant | None:
    row = (await session.execute(select(TenantRow).where(TenantRow.name == name))).scalar_one_or_none()
    return None if row is None else StoredTenant(id=row.id, name=row.name)


async def issue_api_key(session: AsyncSession, *, tenant_id: str) -> IssuedKey:
    tenant = await session.get(TenantRow, tenant_id)
    if tenant is None:
        raise NotFound(f"no tenant {tenant_id!r}")
    api_key = "lethe_" + secrets.token_urlsafe(32)
    row = ApiKeyRow(tenant_id=tenant_id, key_hash=hash_key(api_key), prefix=api_key[:12])
    session.add(row)
    await session.flush()
    return IssuedKey(tenant_id=tenant.id, tenant_name=tenant.name, api_key=api_key, key_id=row.id,
                     prefix=row.prefix)


async def list_keys(session: AsyncSession, *, tenant_id: str) -> list[StoredKey]:
    """The tenant's keys, oldest first (rows hold only a key's hash and its first characters)."""
    if await session.get(TenantRow, tenant_id) is None:
        raise NotFound(f"no tenant {tenant_id!r}")
    rows = await session.execute(select(ApiKeyRow).where(ApiKeyRow.tenant_id == tenant_id).order_by(ApiKeyRow.id))
    return [_key(row) for row in rows.scalars()]


async def revoke_key(session: AsyncSession, *, tenant_id: str, key_id: int) -> StoredKey:
    """Revoke one key (again is a no-op that keeps the first time)."""
    row = await session.get(ApiKeyRow, key_id)
    if row is None or row.tenant_id != tenant_id:
        raise NotFound(f"no key {key_id} for tenant {tenant_id!r}")
    if row.revoked_at is None:
        row.revoked_at = func.now()
        await session.flush()
        await session.refresh(row)
    return _key(row)


async def tenant_for_key(session: AsyncSession, api_key: str) -> str | None:
    """The tenant id a live key belongs to, or None. The one lookup that starts without a tenant."""
    row = await session.execute(
        select(ApiKeyRow.tenant_id).where(ApiKeyRow.key_hash == hash_key(api_key), ApiKeyRow.revoked_at.is_(None))
    )
    return row.scalar_one_or_none()
