"""Which provider a proxied call goes to: the one named in the request's headers, or the tenant's stored one.

A stored key is only ever sent to its stored base URL: a request that names another URL brings its own key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from contracts.errors import InvalidInput, NotFound
from providers.upstream import UpstreamPool, UpstreamTarget
from service.proxy.addresses import UpstreamAddresses
from store.db import Database
from store.repositories import upstreams
from store.repositories.upstreams import StoredUpstream
from store.secrets import SecretBox

__all__ = ["ANTHROPIC_BASE_URL", "DEFAULT_BASE_URL", "ProxyContext", "StoredUpstream"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Where a Messages call with a key header and no URL goes (paths are relative to it, as to the OpenAI one).
ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"
# Like API keys: a changed upstream reaches every replica within this time.
_STORED_TTL_SECONDS = 5.0


@dataclass
class ProxyContext:
    db: Database
    pool: UpstreamPool
    box: SecretBox
    allow_url_header: bool = True
    # Which private, loopback or link-local upstreams a request may name (none unless listed).
    addresses: UpstreamAddresses = field(default_factory=UpstreamAddresses)
    _stored: dict[str, tuple[StoredUpstream | None, float]] = field(default_factory=dict)

    async def stored(self, tenant_id: str) -> StoredUpstream | None:
        found = self._stored.get(tenant_id)
        if found is not None and time.monotonic() - found[1] < _STORED_TTL_SECONDS:
            return found[0]
        async with self.db.session() as session:
            upstream = await upstreams.get_upstream(session, tenant_id=tenant_id, box=self.box)
        self._stored[tenant_id] = (upstream, time.monotonic())
        return upstream

    def forget(self, tenant_id: str) -> None:
        self._stored.pop(tenant_id, None)

    async def set(self, tenant_id: str, *, base_url: str, api_key: str | None) -> StoredUpstream:
        """Store the tenant's upstream, its key sealed; this replica uses it at once."""
        async with self.db.session() as session, session.begin():
            stored = await upstreams.set_upstream(session, tenant_id=tenant_id, base_url=base_url, api_key=api_key,
                                                  box=self.box)
        self.forget(tenant_id)
        return stored

    async def shown(self, tenant_id: str) -> StoredUpstream:
        """The tenant's upstream as an admin sees it: never its key."""
        async with self.db.session() as session:
            stored = await upstreams.get_upstream(session, tenant_id=tenant_id, box=None)
        if stored is None:
            raise NotFound(f"no upstream set for tenant {tenant_id!r}")
        return stored

    async def clear(self, tenant_id: str) -> StoredUpstream:
        """Remove the tenant's upstream; returns what it was."""
        async with self.db.session() as session, session.begin():
            stored = await upstreams.get_upstream(session, tenant_id=tenant_id, box=None)
            if stored is None:
                raise NotFound(f"no upstream set for tenant {tenant_id!r}")
            await upstreams.clear_upstream(session, tenant_id=tenant_id)
        self.forget(tenant_id)
        return stored

    async def target(self, tenant_id: str, *, base_url: str | None, api_key: str | None,
                     default_base_url: str = DEFAULT_BASE_URL) -> UpstreamTarget:
        if base_url:
            if not self.allow_url_header:
                raise InvalidInput("this gateway takes no X-Lethe-Upstream-Base-URL (LETHE_UPSTREAM_URL_HEADER)",
                                   field="X-Lethe-Upstream-Base-URL")
            if not base_url.startswith(("http://", "https://")):
                raise InvalidInput("X-Lethe-Upstream-Base-URL must be an http(s) URL",
                                   field="X-Lethe-Upstream-Base-URL")
            await self.addresses.check(base_url)
            return UpstreamTarget(base_url, api_key)
        stored = await self.stored(tenant_id)
        if api_key:
            return UpstreamTarget(stored.base_url if stored else default_base_url, api_key)
        if stored is None:
            raise InvalidInput(
                "no upstream for this tenant: set one (PUT /v1/admin/tenants/{id}/upstream, or `lethe tenant "
                "upstream`) or send X-Lethe-Upstream-Base-URL and X-Lethe-Upstream-Key", field="X-Lethe-Upstream-Key")
        return UpstreamTarget(stored.base_url, stored.api_key)
