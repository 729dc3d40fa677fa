"""Tenants and their keys, behind the admin token: create a tenant, issue, list, revoke and rotate keys
(`service.tenants`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, status

from api.body import parse_json
from api.deps import AdminDep, ServicesDep
from api.openapi import BODY, errors
from api.schemas import KeyPublic, TenantCreate, TenantCreated
from api.user_schemas import ProfilePublic
from service import tenants, users

router = APIRouter(prefix="/v1/admin", tags=["admin"])

TenantId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,40}$")]
KeyId = Annotated[int, Path(ge=1, le=2**63 - 1)]
ADMIN = (401, 422, 503)


def _issued(issued: tenants.IssuedKey) -> TenantCreated:
    return TenantCreated(tenant_id=issued.tenant_id, name=issued.tenant_name, api_key=issued.api_key,
                         key_id=issued.key_id, prefix=issued.prefix)


@router.post("/tenants", status_code=status.HTTP_201_CREATED, response_model=TenantCreated,
             responses=errors(*ADMIN, *BODY, 409))
async def create_tenant(body: TenantCreate, services: ServicesDep, _: AdminDep) -> TenantCreated:
    return _issued(await tenants.create_tenant(services.db, name=body.name))


@router.post("/tenants/{tenant_id}/keys", status_code=status.HTTP_201_CREATED, response_model=TenantCreated,
             responses=errors(*ADMIN, 404))
async def create_key(tenant_id: TenantId, services: ServicesDep, _: AdminDep) -> TenantCreated:
    return _issued(await tenants.issue_key(services.db, tenant_id=tenant_id))


@router.get("/tenants/{tenant_id}/keys", response_model=list[KeyPublic], responses=errors(*ADMIN, 404))
async def list_keys(tenant_id: TenantId, services: ServicesDep, _: AdminDep) -> list[KeyPublic]:
    return [KeyPublic.of(key) for key in await tenants.list_keys(services.db, tenant_id=tenant_id)]


@router.delete("/tenants/{tenant_id}/keys/{key_id}", response_model=KeyPublic, responses=errors(*ADMIN, 404))
async def revoke_key(tenant_id: TenantId, key_id: KeyId, services: ServicesDep, _: AdminDep) -> KeyPublic:
    return KeyPublic.of(await tenants.revoke_key(services.db, tenant_id=tenant_id, key_id=key_id))


@router.post("/tenants/{tenant_id}/keys/{key_id}/rotate", status_code=status.HTTP_201_CREATED,
             response_model=TenantCreated, responses=errors(*ADMIN, 404))
async def rotate_key(tenant_id: TenantId, key_id: KeyId, services: ServicesDep, _: AdminDep) -> TenantCreated:
    """A new key for the tenant and the old one revoked, in one transaction."""
    return _issued(await tenants.rotate_key(services.db, tenant_id=tenant_id, key_id=key_id))


@router.get("/tenants/{tenant_id}/profile", response_model=ProfilePublic, responses=errors(*ADMIN, 404))
async def get_profile(tenant_id: TenantId, services: ServicesDep, _: AdminDep) -> dict[str, Any]:
    """Which sources of a fact feed the tenant's users' graphs: the defaults with the tenant's own settings."""
    return await users.get_profile(services.db, tenant_id=tenant_id)


@router.put("/tenants/{tenant_id}/profile", response_model=ProfilePublic, responses=errors(*ADMIN, *BODY, 404),
            openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["profile"], "additionalProperties": False, "properties": {
                    "profile": {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}}}}}}}})
async def put_profile(tenant_id: TenantId, request: Request, services: ServicesDep, _: AdminDep) -> dict[str, Any]:
    """Set sources on (`true`) or off (`false`), or back to the default (`null`); others are left as they are.
    Facts already in a graph stay; what is fed from then on follows the new profile."""
    return await users.put_profile(services.db, tenant_id=tenant_id, body=parse_json(await request.body()))
