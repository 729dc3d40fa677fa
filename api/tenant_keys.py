"""API keys the gateway has recently checked, so a busy tenant's every call does not look its key up again.

Only keys found live are kept, for a few seconds: a revoked key stops working on every replica within that
time, and an unknown key is always looked up (and refused) afresh.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from store.db import Database, system_scope
from store.repositories import tenants

__all__ = ["TenantKeys"]


class TenantKeys:
    def __init__(self, db: Database, *, ttl_seconds: float = 5.0, max_keys: int = 10_000) -> None:
        self.db, self.ttl_seconds, self.max_keys = db, ttl_seconds, max_keys
        self._known: OrderedDict[str, tuple[str, float]] = OrderedDict()

    async def tenant_for(self, api_key: str) -> str | None:
        digest = tenants.hash_key(api_key)  # never keep the key itself
        found = self._known.get(digest)
        if found is not None and time.monotonic() - found[1] < self.ttl_seconds:
            return found[0]
        with system_scope():  # the one lookup that starts without a tenant
            async with self.db.session() as session:
                tenant_id = await tenants.tenant_for_key(session, api_key)
        if tenant_id is None:
            self._known.pop(digest, None)
            return None
        self._known[digest] = (tenant_id, time.monotonic())
        self._known.move_to_end(digest)
        while len(self._known) > self.max_keys:
            self._known.popitem(last=False)
        return tenant_id
