"""A tenant's upstream for the proxy, behind the admin token: the key is stored encrypted, never shown again."""

from __future__ import annotations

from fastapi import APIRouter, Request

from api.deps import AdminDep, DatabaseDep
from api.openapi import BODY, errors
from api.proxy.schemas import UpstreamPublic, UpstreamSet
from api.proxy.upstreams import ProxyContext
from contracts.errors import NotFound
from store.repositories import upstreams

router = APIRouter(prefix="/v1/admin/tenants/{tenant_id}/upstream", tags=["admin"])

ADMIN = (401, 422, 503)


@router.put("", response_model=UpstreamPublic, responses=errors(*ADMIN, *BODY, 404))
async def set_upstream(tenant_id: str, body: UpstreamSet, request: Request, db: DatabaseDep,
                       _: AdminDep) -> UpstreamPublic:
    proxy: ProxyContext = request.app.state.proxy
    async with db.session() as session, session.begin():
        stored = await upstreams.set_upstream(session, tenant_id=tenant_id, base_url=body.base_url,
                                              api_key=body.api_key, box=proxy.box)
    proxy.forget(tenant_id)
    return UpstreamPublic(tenant_id=tenant_id, base_url=stored.base_url, api_key_hint=stored.api_key_hint)


@router.get("", response_model=UpstreamPublic, responses=errors(*ADMIN, 404))
async def get_upstream(tenant_id: str, db: DatabaseDep, _: AdminDep) -> UpstreamPublic:
    async with db.session() as session:
        stored = await upstreams.get_upstream(session, tenant_id=tenant_id, box=None)
    if stored is None:
        raise NotFound(f"no upstream set for tenant {tenant_id!r}")
    return UpstreamPublic(tenant_id=tenant_id, base_url=stored.base_url, api_key_hint=stored.api_key_hint)


@router.delete("", response_model=UpstreamPublic, responses=errors(*ADMIN, 404))
async def clear_upstream(tenant_id: str, request: Request, db: DatabaseDep, _: AdminDep) -> UpstreamPublic:
    async with db.session() as session, session.begin():
        stored = await upstreams.get_upstream(session, tenant_id=tenant_id, box=None)
        if stored is None:
            raise NotFound(f"no upstream set for tenant {tenant_id!r}")
        await upstreams.clear_upstream(session, tenant_id=tenant_id)
    request.app.state.proxy.forget(tenant_id)
    return UpstreamPublic(tenant_id=tenant_id, base_url=stored.base_url, api_key_hint=stored.api_key_hint)
