"""A tenant's upstream for the proxy, behind the admin token: the key is stored encrypted, never shown again."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AdminDep, ProxyDep
from api.openapi import BODY, errors
from api.proxy.schemas import UpstreamPublic, UpstreamSet
from service.proxy.upstreams import StoredUpstream

router = APIRouter(prefix="/v1/admin/tenants/{tenant_id}/upstream", tags=["admin"])

ADMIN = (401, 422, 503)


def _public(tenant_id: str, stored: StoredUpstream) -> UpstreamPublic:
    return UpstreamPublic(tenant_id=tenant_id, base_url=stored.base_url, api_key_hint=stored.api_key_hint)


@router.put("", response_model=UpstreamPublic, responses=errors(*ADMIN, *BODY, 404))
async def set_upstream(tenant_id: str, body: UpstreamSet, proxy: ProxyDep, _: AdminDep) -> UpstreamPublic:
    return _public(tenant_id, await proxy.set(tenant_id, base_url=body.base_url, api_key=body.api_key))


@router.get("", response_model=UpstreamPublic, responses=errors(*ADMIN, 404))
async def get_upstream(tenant_id: str, proxy: ProxyDep, _: AdminDep) -> UpstreamPublic:
    return _public(tenant_id, await proxy.shown(tenant_id))


@router.delete("", response_model=UpstreamPublic, responses=errors(*ADMIN, 404))
async def clear_upstream(tenant_id: str, proxy: ProxyDep, _: AdminDep) -> UpstreamPublic:
    return _public(tenant_id, await proxy.clear(tenant_id))
