"""Tenants and their keys: create a tenant with its first key, issue, list, revoke and rotate keys.

The admin routes and `lethe tenant` both call these. A revoked key stops working on every replica within
`TenantKeys`' cache time (service/tenant_keys.py)."""

from __future__ import annotations

from store.db import Database
from store.repositories import tenants
from store.repositories.tenants import IssuedKey, StoredKey

__all__ = ["IssuedKey", "StoredKey", "create_tenant", "issue_key", "list_keys", "revoke_key", "rotate_key"]


async def create_tenant(db: Database, *, name: str) -> IssuedKey:
    """A new tenant and its first key, in one transaction."""
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=name)
        return await tenants.issue_api_key(session, tenant_id=tenant.id)


async def issue_key(db: Database, *, tenant_id: str) -> IssuedKey:
    async with db.session() as session, session.begin():
        return await tenants.issue_api_key(session, tenant_id=tenant_id)


async def list_keys(db: Database, *, tenant_id: str) -> list[StoredKey]:
    async with db.session() as session:
        return await tenants.list_keys(session, tenant_id=tenant_id)


async def revoke_key(db: Database, *, tenant_id: str, key_id: int) -> StoredKey:
    async with db.session() as session, session.begin():
        return await tenants.revoke_key(session, tenant_id=tenant_id, key_id=key_id)


async def rotate_key(db: Database, *, tenant_id: str, key_id: int) -> IssuedKey:
    """A new key for the tenant and the old one revoked, in one transaction."""
    async with db.session() as session, session.begin():
        await tenants.revoke_key(session, tenant_id=tenant_id, key_id=key_id)
        return await tenants.issue_api_key(session, tenant_id=tenant_id)
