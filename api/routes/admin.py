"""Tenants and their keys, behind the admin token."""

from __future__ import annotations

from fastapi import APIRouter, status

from api.deps import AdminDep, DatabaseDep
from api.schemas import TenantCreate, TenantCreated
from store.repositories import tenants

router = APIRouter(prefix="/v1/admin", tags=["admin"])


@router.post("/tenants", status_code=status.HTTP_201_CREATED, response_model=TenantCreated)
async def create_tenant(body: TenantCreate, db: DatabaseDep, _: AdminDep) -> TenantCreated:
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=body.name)
        issued = await tenants.issue_api_key(session, tenant_id=tenant.id)
    return TenantCreated(tenant_id=issued.tenant_id, name=issued.tenant_name, api_key=issued.api_key)


@router.post("/tenants/{tenant_id}/keys", status_code=status.HTTP_201_CREATED, response_model=TenantCreated)
async def create_key(tenant_id: str, db: DatabaseDep, _: AdminDep) -> TenantCreated:
    async with db.session() as session, session.begin():
        issued = await tenants.issue_api_key(session, tenant_id=tenant_id)
    return TenantCreated(tenant_id=issued.tenant_id, name=issued.tenant_name, api_key=issued.api_key)
