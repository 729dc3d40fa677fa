"""Tenants and their keys, behind the admin token: create a tenant, issue, list, revoke and rotate keys.

A revoked key stops working on every replica within `TenantKeys`' cache time (5 s, api/tenant_keys.py).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status

from api.deps import AdminDep, DatabaseDep
from api.openapi import BODY, errors
from api.schemas import KeyPublic, TenantCreate, TenantCreated
from store.repositories import tenants

router = APIRouter(prefix="/v1/admin", tags=["admin"])

TenantId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,40}$")]
KeyId = Annotated[int, Path(ge=1, le=2**63 - 1)]
ADMIN = (401, 422, 503)


def _issued(issued: tenants.IssuedKey) -> TenantCreated:
    return TenantCreated(tenant_id=issued.tenant_id, name=issued.tenant_name, api_key=issued.api_key,
                         key_id=issued.key_id, prefix=issued.prefix)


@router.post("/tenants", status_code=status.HTTP_201_CREATED, response_model=TenantCreated,
             responses=errors(*ADMIN, *BODY, 409))
async def create_tenant(body: TenantCreate, db: DatabaseDep, _: AdminDep) -> TenantCreated:
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=body.name)
        issued = await tenants.issue_api_key(session, tenant_id=tenant.id)
    return _issued(issued)


@router.post("/tenants/{tenant_id}/keys", status_code=status.HTTP_201_CREATED, response_model=TenantCreated,
             responses=errors(*ADMIN, 404))
async def create_key(tenant_id: TenantId, db: DatabaseDep, _: AdminDep) -> TenantCreated:
    async with db.session() as session, session.begin():
        issued = await tenants.issue_api_key(session, tenant_id=tenant_id)
    return _issued(issued)


@router.get("/tenants/{tenant_id}/keys", response_model=list[KeyPublic], responses=errors(*ADMIN, 404))
async def list_keys(tenant_id: TenantId, db: DatabaseDep, _: AdminDep) -> list[KeyPublic]:
    async with db.session() as session:
        rows = await tenants.list_keys(session, tenant_id=tenant_id)
    return [KeyPublic.of(row) for row in rows]


@router.delete("/tenants/{tenant_id}/keys/{key_id}", response_model=KeyPublic, responses=errors(*ADMIN, 404))
async def revoke_key(tenant_id: TenantId, key_id: KeyId, db: DatabaseDep, _: AdminDep) -> KeyPublic:
    async with db.session() as session, session.begin():
        row = await tenants.revoke_key(session, tenant_id=tenant_id, key_id=key_id)
    return KeyPublic.of(row)


@router.post("/tenants/{tenant_id}/keys/{key_id}/rotate", status_code=status.HTTP_201_CREATED,
             response_model=TenantCreated, responses=errors(*ADMIN, 404))
async def rotate_key(tenant_id: TenantId, key_id: KeyId, db: DatabaseDep, _: AdminDep) -> TenantCreated:
    """A new key for the tenant and the old one revoked, in one transaction."""
    async with db.session() as session, session.begin():
        await tenants.revoke_key(session, tenant_id=tenant_id, key_id=key_id)
        issued = await tenants.issue_api_key(session, tenant_id=tenant_id)
    return _issued(issued)
