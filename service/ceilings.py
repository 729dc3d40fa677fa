"""The ceiling a request is planned against: the model's, from the tenant's own table, the deployment's, or the
configured default (`MechanismConfig.for_model`).

A tenant's table is read at most every few seconds per gateway process: it changes rarely (an operator's
command), and a decorate should not pay a query for it. A change shows within `TTL_SECONDS`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from cachetools import TTLCache

from contracts.errors import InvalidInput, NotFound
from engine.config import MechanismConfig
from store.db import Database, StoreSession
from store.repositories import model_ceilings

__all__ = ["MAX_CEILING_TOKENS", "MIN_CEILING_TOKENS", "TTL_SECONDS", "TenantCeilings"]

MIN_CEILING_TOKENS = 1000  # as LETHE_CEILING_TOKENS: below it no turn and its instructions fit
MAX_CEILING_TOKENS = 10_000_000

TTL_SECONDS = 5.0


class TenantCeilings:
    def __init__(self, *, ttl_seconds: float = TTL_SECONDS, max_tenants: int = 10_000) -> None:
        self._tables: TTLCache[str, dict[str, int]] = TTLCache(maxsize=max_tenants, ttl=ttl_seconds)

    async def config_for(self, session: StoreSession, config: MechanismConfig, *, tenant_id: str,
                         model: str | None) -> MechanismConfig:
        table = self._tables.get(tenant_id)
        if table is None:
            table = self._tables[tenant_id] = await model_ceilings.tenant_ceilings(session, tenant_id=tenant_id)
        return config.for_model(model, table)

    def forget(self, tenant_id: str) -> None:
        """After a change on this replica: used at once here (other replicas within `TTL_SECONDS`)."""
        self._tables.pop(tenant_id, None)

    async def table(self, db: Database, tenant_id: str) -> dict[str, int]:
        async with db.session() as session:
            return await model_ceilings.tenant_ceilings(session, tenant_id=tenant_id, known=True)

    async def set(self, db: Database, tenant_id: str, *, model: str, ceiling_tokens: int) -> dict[str, int]:
        name = model.strip().lower()
        if not name or len(name) > 200:
            raise InvalidInput("model must name a model (1 to 200 characters)", field="model")
        if not MIN_CEILING_TOKENS <= ceiling_tokens <= MAX_CEILING_TOKENS:
            raise InvalidInput(f"ceiling_tokens must be between {MIN_CEILING_TOKENS} and {MAX_CEILING_TOKENS}",
                               field="ceiling_tokens")
        async with db.session() as session, session.begin():
            await model_ceilings.set_ceiling(session, tenant_id=tenant_id, model=name, ceiling_tokens=ceiling_tokens,
                                             at=datetime.now(UTC))
            table = await model_ceilings.tenant_ceilings(session, tenant_id=tenant_id)
        self.forget(tenant_id)
        return table

    async def clear(self, db: Database, tenant_id: str, *, model: str) -> dict[str, int]:
        async with db.session() as session, session.begin():
            table = await model_ceilings.tenant_ceilings(session, tenant_id=tenant_id, known=True)
            if not await model_ceilings.clear_ceiling(session, tenant_id=tenant_id, model=model.strip().lower()):
                raise NotFound(f"tenant {tenant_id!r} has no ceiling of its own for model {model!r}")
            table.pop(model.strip().lower(), None)
        self.forget(tenant_id)
        return table
