"""A tenant's own ceilings per model, behind the admin token: read before the deployment's table and the known
context windows (docs/configuration.md, "Ceilings per model")."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import AdminDep, HotPathDep
from api.openapi import BODY, errors
from service.ceilings import MAX_CEILING_TOKENS, MIN_CEILING_TOKENS

router = APIRouter(prefix="/v1/admin/tenants/{tenant_id}/ceilings", tags=["admin"])

ADMIN = (401, 422, 503)


class CeilingSet(BaseModel):
    ceiling_tokens: int = Field(ge=MIN_CEILING_TOKENS, le=MAX_CEILING_TOKENS)


class TenantCeilingsPublic(BaseModel):
    tenant_id: str
    # Model name (or family: `gpt-4o` covers `gpt-4o-2024-08-06`) -> ceiling in tokens.
    ceilings: dict[str, int]


@router.get("", response_model=TenantCeilingsPublic, responses=errors(*ADMIN, 404))
async def get_ceilings(tenant_id: str, hot: HotPathDep, _: AdminDep) -> TenantCeilingsPublic:
    return TenantCeilingsPublic(tenant_id=tenant_id, ceilings=await hot.ceilings.table(hot.db, tenant_id))


@router.put("/{model:path}", response_model=TenantCeilingsPublic, responses=errors(*ADMIN, *BODY, 404))
async def set_ceiling(tenant_id: str, model: str, body: CeilingSet, hot: HotPathDep, _: AdminDep
                      ) -> TenantCeilingsPublic:
    table = await hot.ceilings.set(hot.db, tenant_id, model=model, ceiling_tokens=body.ceiling_tokens)
    return TenantCeilingsPublic(tenant_id=tenant_id, ceilings=table)


@router.delete("/{model:path}", response_model=TenantCeilingsPublic, responses=errors(*ADMIN, 404))
async def clear_ceiling(tenant_id: str, model: str, hot: HotPathDep, _: AdminDep) -> TenantCeilingsPublic:
    return TenantCeilingsPublic(tenant_id=tenant_id, ceilings=await hot.ceilings.clear(hot.db, tenant_id, model=model))
