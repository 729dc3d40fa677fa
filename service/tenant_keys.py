"""API keys the gateway has recently checked, so a busy tenant's every call does not look its key up again.

Only keys found live are kept, for a few seconds: a revoked key stops working on every replica within that
time, and an unknown key is always looked up (and refused) afresh.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cachetools import TTLCache

from store.db import Database, bind_tenant, system_scope
from store.repositories import tenants
from store.rls import SYSTEM

__all__ = ["TenantKeys", "act_for_admin", "act_for_tenant"]


def act_for_tenant(tenant_id: str) -> None:
    """From here on, this request's transactions see only `tenant_id`'s rows (row-level security)."""
    bind_tenant(tenant_id)


def act_for_admin() -> None:
    """From here on, this request's transactions see every tenant's rows: admin calls span tenants."""
    bind_tenant(SYSTEM)


class TenantKeys:
    def __init__(self, db: Database, *, ttl_seconds: float = 5.0, max_keys: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        # Keyed by the key's hash, never the key itself.
        self._known: TTLCache[str, str] = TTLCache(maxsize=max_keys, ttl=ttl_seconds, timer=clock)

    async def tenant_for(self, api_key: str) -> str | None:
        digest = tenants.hash_key(api_key)
        found = self._known.get(digest)
        if found is not None:
            return found
        with system_scope():  # the one lookup that starts without a tenant
            async with self.db.session() as session:
                tenant_id = await tenants.tenant_for_key(session, api_key)
        if tenant_id is None:
            self._known.pop(digest, None)
            return None
        self._known[digest] = tenant_id
        return tenant_id
